package ml.juno.coordinator.service;

import java.util.List;
import ml.juno.coordinator.grammar.Grammar;
import ml.juno.coordinator.sampling.SamplingParams;

/**
 * How to generate, once the prompt is known.
 *
 * @param maxTokens   generated tokens at most per choice; 0 = until the context is full
 * @param sampling    sampler settings; choice {@code i} draws with seed {@code sampling.seed() + i}
 * @param stopStrings the client's stop strings (the template's end-of-turn strings are added for chats)
 * @param n           choices of the one prompt (they share its prefix cache); >= 1
 * @param priority    lower runs first
 * @param logprobs    -1: none; else the chosen token's log-probability plus this many alternatives
 * @param grammar     every choice's text must be a sentence of it (constrained decoding; {@code response_format},
 *                    {@code grammar}); {@code null}: unconstrained. Bound to the model's vocabulary when the request
 *                    starts.
 */
public record GenerationOptions(int maxTokens, SamplingParams sampling, List<String> stopStrings, int n, int priority,
                                int logprobs, Grammar grammar) {
    public GenerationOptions {
        if (maxTokens < 0 || n < 1) {
            throw new IllegalArgumentException("maxTokens must be >= 0 and n >= 1");
        }
        stopStrings = List.copyOf(stopStrings);
    }

    /** Unconstrained. */
    public GenerationOptions(int maxTokens, SamplingParams sampling, List<String> stopStrings, int n, int priority,
                             int logprobs) {
        this(maxTokens, sampling, stopStrings, n, priority, logprobs, null);
    }

    /** The same options, every choice constrained by {@code g} ({@code null}: unconstrained). */
    public GenerationOptions withGrammar(Grammar g) {
        return new GenerationOptions(maxTokens, sampling, stopStrings, n, priority, logprobs, g);
    }
}
