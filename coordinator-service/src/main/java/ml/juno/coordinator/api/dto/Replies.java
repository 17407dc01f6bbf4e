package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.service.CollectedGeneration;
import ml.juno.coordinator.service.ServedModel;
import ml.juno.coordinator.tokenizer.Tokenizer;

/** Whole responses of the non-streaming endpoints; an engine failure becomes a 500 in the error envelope. */
public final class Replies {

    private final ObjectMapper json;

    public Replies(ObjectMapper json) {
        this.json = json;
    }

    public HttpReply chat(String id, long created, ServedModel model, CollectedGeneration.Result r, boolean logprobs) {
        if (r.failure().isPresent()) {
            return failed(r.failure().get());
        }
        Tokenizer tok = model.engine().tokenizer();
        List<ChatCompletion.Choice> choices = new ArrayList<>();
        for (CollectedGeneration.Choice c : r.choices()) {
            choices.add(new ChatCompletion.Choice(c.index(), new ChatCompletion.Message("assistant", c.text()),
                    logprobs ? LogprobsMapping.chat(c.logprobs(), tok) : null, c.reason().wireName()));
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
