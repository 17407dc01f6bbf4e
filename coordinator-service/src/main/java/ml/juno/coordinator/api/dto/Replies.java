package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.service.CollectedGeneration;
import ml.juno.coordinator.service.ServedModel;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.coordinator.tools.ToolOutput;

/** Whole responses of the non-streaming endpoints; an engine failure becomes a 500 in the error envelope. */
public final class Replies {

    private final ObjectMapper json;

    public Replies(ObjectMapper json) {
        this.json = json;
    }

    public HttpReply chat(String id, long created, ServedModel model, CollectedGeneration.Result r, boolean logprobs) {
        return chat(id, created, model, r, logprobs, null);
    }

    /** As above, each choice read for tool calls when {@code tools} parses answers. */
    public HttpReply chat(String id, long created, ServedModel model, CollectedGeneration.Result r, boolean logprobs, ToolMapping.Plan tools) {
        if (r.failure().isPresent()) {
            return failed(r.failure().get());
        }
        Tokenizer tok = model.engine().tokenizer();
        List<ChatCompletion.Choice> choices = new ArrayList<>();
        for (CollectedGeneration.Choice c : r.choices()) {
            ToolOutput out = tools == null ? null : tools.output(c.text());
            ChatCompletion.Message message = out == null ? new ChatCompletion.Message("assistant", c.text())
                    : new ChatCompletion.Message("assistant", out.content(), out.calls().stream()
                            .map(t -> new ChatCompletion.ToolCallOut(t.id(), "function", new ChatCompletion.FunctionOut(t.name(), t.arguments())))
                            .toList());
            choices.add(new ChatCompletion.Choice(c.index(), message,
                    logprobs ? LogprobsMapping.chat(c.logprobs(), tok) : null, out == null ? c.reason().wireName() : finishReason(c.reason(), out)));
        }
        return ok(new ChatCompletion(id, "chat.completion", created, model.id(), model.fingerprint(), choices, UsageDto.of(r.usage())));
    }

    public HttpReply completion(String id, long created, ServedModel model, CollectedGeneration.Result r, boolean logprobs) {
        if (r.failure().isPresent()) {
            return failed(r.failure().get());
        }
        Tokenizer tok = model.engine().tokenizer();
        List<TextCompletion.Choice> choices = new ArrayList<>();
        for (CollectedGeneration.Choice c : r.choices()) {
            choices.add(new TextCompletion.Choice(c.text(), c.index(),
                    logprobs ? LogprobsMapping.text(c.logprobs(), tok, 0) : null, c.reason().wireName()));
        }
        return ok(new TextCompletion(id, "text_completion", created, model.id(), model.fingerprint(), choices, UsageDto.of(r.usage())));
    }

    /** {@code tool_calls} when a choice that ended normally made calls, else the engine's reason. */
    static String finishReason(FinishReason reason, ToolOutput out) {
        return reason == FinishReason.STOP && !out.calls().isEmpty() ? "tool_calls" : reason.wireName();
    }

    private HttpReply failed(CollectedGeneration.Choice c) {
        return reply(500, ErrorResponse.of("The model failed while generating: " + c.message(), ErrorTypes.SERVER, null, "generation_failed"));
    }

    private HttpReply ok(Object body) {
        return reply(200, body);
    }

    private HttpReply reply(int status, Object body) {
        try {
            return new HttpReply(status, json.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a response", e);
        }
    }
}
