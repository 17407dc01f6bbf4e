package ml.juno.engine.step;

import java.util.Arrays;

/**
 * The rows of one forward step, in columns: row {@code i} computes token {@code tokenIds[i]} of the sequence in slot
 * {@code slots[i]} at position {@code positions[i]}, and its logits are wanted when {@code needsLogits[i]}. A stage
 * that does not embed (pipeline stages after the first) gets no token ids: its input is the previous stage's
 * activations. Rows with {@code needsHidden} also return their final hidden state (after the output norm, before the
 * output projection): what embeddings are pooled from.
 *
 * @param slots       [rows] sequence slots
 * @param positions   [rows] positions, each {@code >= 0}
 * @param tokenIds    [rows] token ids, or empty
 * @param needsLogits [rows] whether the row's logits (its sampled token) are wanted
 * @param adapters    [rows] the named LoRA adapter of each row's sequence (0: none), or empty when no row has one
 * @param needsHidden [rows] whether the row's final hidden state is wanted, or empty when no row wants one
 */
public record StepRows(int[] slots, int[] positions, int[] tokenIds, boolean[] needsLogits, int[] adapters,
                       boolean[] needsHidden) {
    private static final int[] NONE = new int[0];
    private static final boolean[] NO_HIDDEN = new boolean[0];

    /** Rows without named adapters. */
    public StepRows(int[] slots, int[] positions, int[] tokenIds, boolean[] needsLogits) {
        this(slots, positions, tokenIds, needsLogits, NONE, NO_HIDDEN);
    }

    /** Rows that want no hidden states. */
    public StepRows(int[] slots, int[] positions, int[] tokenIds, boolean[] needsLogits, int[] adapters) {
        this(slots, positions, tokenIds, needsLogits, adapters, NO_HIDDEN);
    }

    public StepRows {
        if (needsHidden.length != 0 && needsHidden.length != slots.length) {
            throw new IllegalArgumentException(needsHidden.length + " needs_hidden flags for " + slots.length
                    + " rows (one per row, or none)");
        }
        if (adapters.length != 0 && adapters.length != slots.length) {
            throw new IllegalArgumentException(adapters.length + " adapter ids for " + slots.length + " rows (one per row, or none)");
        }
        int n = slots.length;
        if (n == 0 || positions.length != n || needsLogits.length != n) {
            throw new IllegalArgumentException("slots, positions and needs_logits must have the same, non-zero length; got "
                    + n + ", " + positions.length + " and " + needsLogits.length);
        }
        if (tokenIds.length != n && tokenIds.length != 0) {
            throw new IllegalArgumentException(tokenIds.length + " token ids for " + n + " rows (one per row, or none)");
        }
        for (int i = 0; i < n; i++) {
            if (slots[i] < 0 || positions[i] < 0) {
                throw new IllegalArgumentException("row " + i + ": slot " + slots[i] + ", position " + positions[i]
                        + " (both must be >= 0)");
            }
        }
    }

    public int count() {
        return slots.length;
    }

    /** True when the rows carry token ids (the stage embeds them). */
    public boolean hasTokens() {
        return tokenIds.length != 0;
    }

    /** The named adapter of row {@code i} (0: none). */
    public int adapter(int i) {
        return adapters.length == 0 ? 0 : adapters[i];
    }

    /** Whether some row asks for a named adapter. */
    public boolean hasAdapters() {
        for (int a : adapters) {
            if (a != 0) {
                return true;
            }
        }
        return false;
    }

    /** Whether row {@code i}'s final hidden state is wanted. */
    public boolean needsHidden(int i) {
        return needsHidden.length != 0 && needsHidden[i];
    }

    /** Rows whose final hidden states are wanted. */
    public int hiddenRows() {
        int k = 0;
        for (boolean b : needsHidden) {
            k += b ? 1 : 0;
        }
        return k;
    }

    /** Rows whose logits are wanted. */
    public int logitRows() {
        int k = 0;
        for (boolean b : needsLogits) {
            k += b ? 1 : 0;
        }
        return k;
    }

    /** The same rows without token ids, for a stage that takes activations. */
    public StepRows withoutTokens() {
        return new StepRows(slots, positions, NONE, needsLogits, adapters, needsHidden);
    }

    /** The same rows with no logits (and no hidden states) wanted. */
    public StepRows withoutLogits() {
        return new StepRows(slots, positions, tokenIds, new boolean[slots.length], adapters, NO_HIDDEN);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StepRows r && Arrays.equals(r.slots, slots) && Arrays.equals(r.positions, positions)
                && Arrays.equals(r.tokenIds, tokenIds) && Arrays.equals(r.needsLogits, needsLogits)
                && Arrays.equals(r.adapters, adapters) && Arrays.equals(r.needsHidden, needsHidden);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(slots) * 31 + Arrays.hashCode(positions);
    }

    @Override
    public String toString() {
        return "StepRows[slots=" + Arrays.toString(slots) + ", positions=" + Arrays.toString(positions) + ", tokens="
                + Arrays.toString(tokenIds) + ", logits=" + Arrays.toString(needsLogits)
                + (adapters.length == 0 ? "" : ", adapters=" + Arrays.toString(adapters))
                + (needsHidden.length == 0 ? "" : ", hidden=" + Arrays.toString(needsHidden)) + "]";
    }
}
