package ml.juno.coordinator.api.dto;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import ml.juno.coordinator.sampling.LogitBias;
import ml.juno.coordinator.sampling.RepetitionPenalties;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.Truncation;
import ml.juno.coordinator.service.GenerationOptions;
import ml.juno.coordinator.service.InvalidRequestException;
import ml.juno.coordinator.service.PromptInput;
import ml.juno.coordinator.tokenizer.ChatMessage;

/**
 * From validated request records to the service's terms, with OpenAI's defaults: temperature 1, top_p 1,
 * no penalties, a random seed when none is given, n = 1 (max_tokens, temperature, top_k and top_p from the server's
 * {@link RequestDefaults} where it was started with them). Checks that span fields live here and fail with
 * {@link InvalidRequestException} naming the field.
 */
public final class RequestMapping {

    /** Tokens the presence, frequency and repetition penalties look back over (llama.cpp's penalty_last_n). */
    static final int PENALTY_WINDOW = 64;

    private RequestMapping() {
    }

    /** The request's messages as the chat template takes them (checked: {@link ToolMapping#messages}). */
    public static PromptInput.Chat chatPrompt(ChatCompletionRequest r) {
        return new PromptInput.Chat(ToolMapping.messages(r));
    }

    public static GenerationOptions chatOptions(ChatCompletionRequest r) {
        return chatOptions(r, RequestDefaults.OPENAI);
    }

    /** As {@link #chatOptions(ChatCompletionRequest)}, with the server's defaults for the fields the request leaves out. */
    public static GenerationOptions chatOptions(ChatCompletionRequest r, RequestDefaults defaults) {
        if (r.topLogprobs() != null && !Boolean.TRUE.equals(r.logprobs())) {
            throw new InvalidRequestException("top_logprobs", "top_logprobs requires logprobs to be true");
        }
        int limit = r.maxCompletionTokens() != null || r.maxTokens() != null || defaults.maxTokens() == null ? r.tokenLimit() : defaults.maxTokens();
        return options(r, limit, r.logprobCount(), defaults).withGrammar(GrammarMapping.of(r.responseFormat(), r.grammar()));
    }

    public static GenerationOptions completionOptions(CompletionRequest r) {
        return completionOptions(r, RequestDefaults.OPENAI);
    }

    /** As {@link #completionOptions(CompletionRequest)}, with the server's defaults for the fields the request leaves out. */
    public static GenerationOptions completionOptions(CompletionRequest r, RequestDefaults defaults) {
        int n = r.n() != null ? r.n() : 1;
        if (r.bestOf() != null && r.bestOf() < n) {
            throw new InvalidRequestException("best_of", "best_of must be at least n (" + n + "), got " + r.bestOf());
        }
        if (r.bestOf() != null && r.bestOf() > n && r.streaming()) {
            throw new InvalidRequestException("best_of", "best_of cannot be used with stream (only the best n of "
                    + r.bestOf() + " are returned, after all are done)");
        }
        if ((long) r.prompt().size() * r.generatedPerPrompt() > Limits.MAX_CHOICES) {
            throw new InvalidRequestException(r.bestOf() != null ? "best_of" : "n", r.prompt().size() + " prompts times "
                    + r.generatedPerPrompt() + " choices is more than the " + Limits.MAX_CHOICES + " one request may generate");
        }
        int limit = r.maxTokens() != null || defaults.maxTokens() == null ? r.tokenLimit() : defaults.maxTokens();
        GenerationOptions o = options(r, limit, r.logprobCount(), defaults).withGrammar(GrammarMapping.gbnf(r.grammar()));
        return r.echoes() && r.logprobCount() >= 0 ? o.scoringThePrompt() : o;
    }

    private static GenerationOptions options(SamplingFields r, int maxTokens, int logprobs, RequestDefaults defaults) {
        if (r.streamOptions() != null && !r.streaming()) {
            throw new InvalidRequestException("stream_options", "stream_options is only allowed when stream is true");
        }
        float temperature = r.temperature() != null ? r.temperature().floatValue()
                : defaults.temperature() != null ? defaults.temperature().floatValue() : 1f;
        float topP = r.topP() != null ? r.topP().floatValue() : defaults.topP() != null ? defaults.topP().floatValue() : 1f;
        int topK = r.topK() != null ? r.topK() : defaults.topK() != null ? defaults.topK() : 0;
        if (topP == 0f) { // "only the most likely token": top-k 1
            topP = 1f;
            topK = 1;
        }
        float minP = r.minP() != null ? r.minP().floatValue() : 0f;
        float repeat = r.repetitionPenalty() != null ? r.repetitionPenalty().floatValue() : 1f;
        float frequency = r.frequencyPenalty() != null ? r.frequencyPenalty().floatValue() : 0f;
        float presence = r.presencePenalty() != null ? r.presencePenalty().floatValue() : 0f;
        RepetitionPenalties penalties = repeat == 1f && frequency == 0f && presence == 0f
                ? RepetitionPenalties.NONE
                : new RepetitionPenalties(repeat, frequency, presence, PENALTY_WINDOW);
        long seed = r.seed() != null ? r.seed() : ThreadLocalRandom.current().nextLong();
        SamplingParams sampling = new SamplingParams(temperature, new Truncation(topK, topP, minP), penalties, logitBias(r.logitBias()), seed);
        int n = r.n() != null ? r.n() : 1;
        int priority = r.priority() != null ? r.priority() : 0;
        return new GenerationOptions(maxTokens, sampling, r.stop() != null ? r.stop() : List.of(), n, priority, logprobs);
    }

    private static LogitBias logitBias(Map<String, Double> bias) {
        if (bias == null || bias.isEmpty()) {
            return LogitBias.NONE;
        }
        Map<Integer, Float> ids = new LinkedHashMap<>();
        for (var e : bias.entrySet()) {
            int id;
            try {
                id = Integer.parseInt(e.getKey().trim());
            } catch (NumberFormatException notANumber) {
                throw new InvalidRequestException("logit_bias", "logit_bias keys must be token ids, got '" + e.getKey() + "'");
            }
            if (id < 0 || ids.put(id, e.getValue().floatValue()) != null) {
                throw new InvalidRequestException("logit_bias", "logit_bias key " + e.getKey() + " is negative or repeated");
            }
        }
        return LogitBias.of(ids);
    }
}
