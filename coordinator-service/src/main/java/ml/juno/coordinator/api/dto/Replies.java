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
        return completion(id, created, model, r, logprobs, null, r.choices().size(), r.choices().size());
    }

    /**
     * A text completion of one or more prompts.
     *
     * @param logprobs  whether the client asked for log-probabilities
     * @param echo      the text of each prompt, which its choices start with ({@code echo}), or null
     * @param generated choices generated per prompt ({@code best_of}, else {@code n})
     * @param n         choices returned per prompt: the {@code n} of the {@code generated} with the highest mean token
     *                  log-probability (all of them when equal); choice {@code p * n + i} is the i-th best of prompt p
     */
    public HttpReply completion(String id, long created, ServedModel model, CollectedGeneration.Result r, boolean logprobs,
                                List<String> echo, int generated, int n) {
        if (r.failure().isPresent()) {
            return failed(r.failure().get());
        }
        Tokenizer tok = model.engine().tokenizer();
        List<TextCompletion.Choice> choices = new ArrayList<>();
        for (int p = 0; p * generated < r.choices().size(); p++) {
            List<CollectedGeneration.Choice> mine = r.choices().subList(p * generated, (p + 1) * generated);
            if (n < generated) {
                mine = new ArrayList<>(mine);
                mine.sort(java.util.Comparator.comparingDouble(Replies::meanLogprob).reversed());
                mine = mine.subList(0, n);
            }
            String prefix = echo != null ? echo.get(p) : "";
            for (int i = 0; i < mine.size(); i++) {
                CollectedGeneration.Choice c = mine.get(i);
                TextCompletion.Logprobs lp = !logprobs ? null
                        : echo != null ? LogprobsMapping.echoed(c.promptLogprobs(), c.logprobs(), tok, prefix)
                        : LogprobsMapping.text(c.logprobs(), tok, 0);
                choices.add(new TextCompletion.Choice(prefix + c.text(), p * n + i, lp, c.reason().wireName()));
            }
        }
        return ok(new TextCompletion(id, "text_completion", created, model.id(), model.fingerprint(), choices, UsageDto.of(r.usage())));
    }

    /** What {@code best_of} ranks by: the mean log-probability of the choice's tokens (an empty choice ranks last). */
    private static double meanLogprob(CollectedGeneration.Choice c) {
        if (c.logprobs().isEmpty()) {
            return Double.NEGATIVE_INFINITY;
        }
        double sum = 0;
        for (var t : c.logprobs()) {
            sum += t.logprob();
        }
        return sum / c.logprobs().size();
    }

    /** {@code tool_calls} when a choice that ended normally made calls, else the engine's reason. */
    static String finishReason(FinishReason reason, ToolOutput out) {
        return reason == FinishReason.STOP && !out.calls().isEmpty() ? "tool_calls" : reason.wireName();
    }

    private HttpReply failed(CollectedGeneration.Choice c) {
        if (ml.juno.coordinator.engine.RequestOutput.timedOut(c.message())) {
            return reply(504, ErrorResponse.of("Request timed out: " + c.message() + " (--request-timeout).", ErrorTypes.SERVER, null,
                    "request_timeout"));
        }
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
