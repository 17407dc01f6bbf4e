package ml.juno.coordinator.sampling;

import ml.juno.coordinator.grammar.GrammarConstraint;

/**
 * How one request picks its next token. Temperature 0 means greedy (argmax, ties to the lowest id);
 * penalties and logit bias still apply then. The same seed with the same prompt gives the same
 * output whatever else runs, because every sequence draws from its own generator.
 *
 * @param temperature logits are divided by it before truncation; 0 = greedy
 * @param truncation  top-k, top-p, min-p
 * @param penalties   repetition / frequency / presence penalties
 * @param logitBias   additive bias per token
 * @param seed        seed of this sequence's random generator
 * @param grammar     constrained decoding: only tokens that keep the text a prefix of the grammar may be drawn (they
 *                    are masked to -inf before every other stage); {@code null}: unconstrained
 */
public record SamplingParams(float temperature, Truncation truncation, RepetitionPenalties penalties,
                             LogitBias logitBias, long seed, GrammarConstraint grammar) {

    /** Unconstrained. */
    public SamplingParams(float temperature, Truncation truncation, RepetitionPenalties penalties, LogitBias logitBias,
                          long seed) {
        this(temperature, truncation, penalties, logitBias, seed, null);
    }

    public SamplingParams {
        if (!(temperature >= 0f) || !Float.isFinite(temperature)) {
            throw new IllegalArgumentException("temperature must be finite and >= 0, got " + temperature);
        }
        if (truncation == null || penalties == null || logitBias == null) {
            throw new IllegalArgumentException("truncation, penalties and logitBias are required (use NONE)");
        }
    }

    /** Greedy decoding with nothing else switched on. */
    public static SamplingParams greedy() {
        return new SamplingParams(0f, Truncation.NONE, RepetitionPenalties.NONE, LogitBias.NONE, 0L);
    }

    /** llama.cpp's defaults: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, no penalties. */
    public static SamplingParams defaults(long seed) {
        return new SamplingParams(0.8f, new Truncation(40, 0.95f, 0.05f), RepetitionPenalties.NONE,
                LogitBias.NONE, seed);
    }

    /** The same settings with another seed (choice {@code i} of a request draws with {@code seed + i}). */
    public SamplingParams withSeed(long newSeed) {
        return new SamplingParams(temperature, truncation, penalties, logitBias, newSeed, grammar);
    }

    /** The same settings constrained by {@code constraint} ({@code null}: unconstrained). */
    public SamplingParams withGrammar(GrammarConstraint constraint) {
        return new SamplingParams(temperature, truncation, penalties, logitBias, seed, constraint);
    }

    public boolean hasGrammar() {
        return grammar != null;
    }

    public boolean isGreedy() {
        return temperature == 0f;
    }
}
