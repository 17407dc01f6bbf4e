package ml.juno.engine.embedding;

import ml.juno.engine.model.HiddenRows;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.step.StepBatch;

/**
 * Embeddings of one sequence at a time on a flat session (tools, tests, and the reference the batched serving path is
 * checked against): the prompt runs in slot 0 from position 0 in chunks of the session's batch, every row asking for
 * its final hidden state and none for logits (the output projection never runs), and the rows are pooled. The KV of
 * slot 0 is simply overwritten by the next call.
 */
public final class Embedder {
    private final InferenceSession session;
    private final StepBatch.Builder batch;

    public Embedder(InferenceSession session) {
        if (session.isPaged()) {
            throw new IllegalArgumentException("Embedder needs a flat session (slot 0 covers the whole context)");
        }
        this.session = session;
        this.batch = new StepBatch.Builder(session.maxBatch());
    }

    /** The pooled, L2-normalised embedding of {@code tokens} ({@code pooling} not {@link Pooling#NONE}). */
    public float[] embed(int[] tokens, Pooling pooling) {
        check(tokens);
        EmbeddingPool pool = new EmbeddingPool(pooling, tokens.length, session.model().config().dims().embedding());
        run(tokens, (hidden, offset, position) -> {
            if (pool.wants(position)) {
                pool.add(hidden, offset, position);
            }
        });
        return pool.vector();
    }

    /** One L2-normalised vector per token ({@link Pooling#NONE}). */
    public float[][] tokenEmbeddings(int[] tokens) {
        check(tokens);
        float[][] out = new float[tokens.length][];
        int dim = session.model().config().dims().embedding();
        run(tokens, (hidden, offset, position) -> {
            double[] v = new double[dim];
            for (int i = 0; i < dim; i++) {
                v[i] = hidden[offset + i];
            }
            out[position] = EmbeddingPool.normalize(v);
        });
        return out;
    }

    /** The raw final hidden states (after the output norm, not normalised) of every token: {@code [tokens][dim]}. */
    public float[][] hiddenStates(int[] tokens) {
        check(tokens);
        float[][] out = new float[tokens.length][];
        int dim = session.model().config().dims().embedding();
        run(tokens, (hidden, offset, position) -> out[position] = java.util.Arrays.copyOfRange(hidden, offset, offset + dim));
        return out;
    }

    private interface RowSink {
        void accept(float[] hidden, int offset, int position);
    }

    private void check(int[] tokens) {
        if (tokens.length == 0) {
            throw new IllegalArgumentException("nothing to embed: no tokens");
        }
        if (tokens.length > session.contextLength()) {
            throw new IllegalArgumentException(tokens.length + " tokens do not fit the context of " + session.contextLength());
        }
    }

    private void run(int[] tokens, RowSink sink) {
        int chunk = session.maxBatch();
        for (int start = 0; start < tokens.length; start += chunk) {
            int end = Math.min(tokens.length, start + chunk);
            batch.clear();
            batch.addHiddenPrompt(0, start, tokens, start, end);
            session.forward(batch.build());
            HiddenRows h = session.finalHidden();
            for (int k = 0; k < h.count(); k++) {
                sink.accept(h.data(), k * h.dim(), start + h.batchRow(k));
            }
        }
    }
}
