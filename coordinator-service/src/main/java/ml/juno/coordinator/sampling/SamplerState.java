package ml.juno.coordinator.sampling;

import ml.juno.coordinator.grammar.GrammarConstraint;
import ml.juno.coordinator.grammar.GrammarMatcher;
import ml.juno.engine.sampling.DrawParams;
import ml.juno.engine.sampling.RowDraw;
import ml.juno.engine.sampling.SamplingChain;
import ml.juno.engine.sampling.TokenWindow;
import ml.juno.engine.sampling.Xoshiro256;

/**
 * What one sequence carries between draws: its parameters, its own random generator (so its output
 * depends only on its seed and its logits), its recent-token window for penalties and how many
 * alternatives' log-probabilities it wants with each token.
 */
public final class SamplerState {
    private static final int[] NONE = new int[0];

    private final SamplingParams params;
    private final Xoshiro256 rng;
    private final TokenWindow window;
    private final int topLogprobs;
    private int[] suppressed = NONE;
    private final GrammarMatcher grammar; // null: unconstrained
    private final DrawParams draw;

    /** A state that wants no log-probabilities. */
    public SamplerState(SamplingParams params, int vocabSize) {
        this(params, vocabSize, -1);
    }

    /**
     * @param topLogprobs -1: no log-probabilities; otherwise the chosen token's plus this many alternatives (0..20)
     */
    public SamplerState(SamplingParams params, int vocabSize, int topLogprobs) {
        if (vocabSize <= 0) {
            throw new IllegalArgumentException("vocab size must be > 0, got " + vocabSize);
        }
        int maxBias = params.logitBias().maxTokenId();
        if (maxBias >= vocabSize) {
            throw new IllegalArgumentException("logit bias names token " + maxBias
                    + " outside the vocabulary of " + vocabSize);
        }
        if (topLogprobs < -1 || topLogprobs > Sampler.MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("top logprobs must be -1 (off) or in [0, " + Sampler.MAX_TOP_LOGPROBS
                    + "], got " + topLogprobs);
        }
        this.params = params;
        this.topLogprobs = topLogprobs;
        this.rng = new Xoshiro256(params.seed());
        this.window = new TokenWindow(params.penalties().window());
        GrammarConstraint g = params.grammar();
        if (g != null && g.vocabSize() != vocabSize) {
            throw new IllegalArgumentException("grammar built for a vocabulary of " + g.vocabSize() + " tokens, the model has "
                    + vocabSize);
        }
        this.grammar = g == null ? null : g.newMatcher();
        RepetitionPenalties pen = params.penalties();
        Truncation t = params.truncation();
        this.draw = new DrawParams(params.temperature(), t.topK(), t.topP(), t.minP(), pen.repeat(), pen.frequency(),
                pen.presence(), params.logitBias().tokenIds(), params.logitBias().values());
    }

    /** The settings as the sampler chain reads them (made once). */
    DrawParams draw() {
        return draw;
    }

    /**
     * True when the node that computes the logits can draw this sequence's token itself ({@link #rowDraw}): everything
     * but a grammar, whose mask only the coordinator can compute.
     */
    public boolean drawsAnywhere() {
        return grammar == null;
    }

    /** This step's draw as it travels to the node with the logits: settings, penalty window, held-back tokens, generator. */
    public RowDraw rowDraw() {
        long[] s = new long[4];
        rng.state(s);
        int n = draw.penalized() ? window.size() : 0;
        return new RowDraw(draw, n == 0 ? NONE : java.util.Arrays.copyOf(window.tokens(), n), n, suppressed, s, topLogprobs);
    }

    /**
     * A node drew this step's token from {@link #rowDraw}'s state: the generator moves on as it did there, so the next
     * draw (wherever it runs) continues the same stream.
     */
    public void drawnElsewhere() {
        for (int i = SamplingChain.drawsPerToken(draw); i > 0; i--) {
            rng.nextDouble();
        }
    }

    /** The sequence's place in its grammar; null when unconstrained. */
    GrammarMatcher grammar() {
        return grammar;
    }

    /**
     * Moves the grammar (if any) past a generated token that is not an end-of-generation token.
     *
     * @return false if the grammar does not allow the token (the sampler's mask makes that impossible for tokens it
     *         drew); true when unconstrained
     */
    public boolean advanceGrammar(int token) {
        return grammar == null || params.grammar().accept(grammar, token);
    }

    /** True if a grammar constrains the sequence and its text is complete with nothing allowed to follow. */
    public boolean grammarComplete() {
        return grammar != null && grammar.isComplete();
    }

    public SamplingParams params() {
        return params;
    }

    /** -1 when no log-probabilities are wanted, else the number of alternatives to report. */
    public int topLogprobs() {
        return topLogprobs;
    }

    Xoshiro256 rng() {
        return rng;
    }

    TokenWindow window() {
        return window;
    }

    /** Records a token of the sequence (prompt or generated) for the penalty window. */
    public void accept(int token) {
        window.add(token);
    }

    /** Records several tokens, e.g. the prompt. */
    public void accept(int[] tokens, int from, int to) {
        for (int i = from; i < to; i++) {
            window.add(tokens[i]);
        }
    }

    /**
     * Tokens that cannot be drawn until this is called again (used to hold back end-of-generation
     * tokens before min-tokens is reached). The array is kept by reference, not copied.
     */
    public void suppress(int[] tokenIds) {
        this.suppressed = tokenIds;
    }

    /** Lifts {@link #suppress(int[])}. */
    public void clearSuppressed() {
        this.suppressed = NONE;
    }

    int[] suppressed() {
        return suppressed;
    }
}
