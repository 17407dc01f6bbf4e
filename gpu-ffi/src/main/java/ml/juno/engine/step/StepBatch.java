package ml.juno.engine.step;

import java.util.Arrays;
import java.util.List;

/**
 * One forward step, the one shape it has from the scheduler's plan to the kernels: the rows (prefill chunks and decode
 * rows of several sequences together) and the block table of each slot that runs. Built once per step by the
 * coordinator, taken as it is by the engine's {@code InferenceSession.forward} in process and, through
 * {@code ProtoMapping}, on every node. A slot's block table, once set, stays in force until it is replaced or released.
 * Tools and tests that make their own steps append rows to a {@link Builder}.
 *
 * @param stepId      increasing step number
 * @param rows        the rows
 * @param blockTables block tables to set before the step, at most one per slot
 */
public record StepBatch(long stepId, StepRows rows, List<SlotBlocks> blockTables) {
    public StepBatch {
        blockTables = List.copyOf(blockTables);
        for (int i = 0; i < blockTables.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (blockTables.get(i).slot() == blockTables.get(j).slot()) {
                    throw new IllegalArgumentException("step " + stepId + ": two block tables for slot "
                            + blockTables.get(i).slot());
                }
            }
        }
    }

    /** The same step for a stage that takes activations instead of token ids. */
    public StepBatch withoutTokens() {
        return new StepBatch(stepId, rows.withoutTokens(), blockTables);
    }

    /** The same step without logits (a tensor-parallel rank other than 0 leaves them to rank 0). */
    public StepBatch withoutLogits() {
        return new StepBatch(stepId, rows.withoutLogits(), blockTables);
    }

    /**
     * Rows appended one at a time into columns of a fixed capacity (prompt chunks, decode rows), then {@link #build()}
     * copies them into a step; {@link #clear()} starts the next one.
     */
    public static final class Builder {
        private final int[] slots;
        private final int[] positions;
        private final int[] tokens;
        private final boolean[] logits;
        private final int[] adapters;
        private final boolean[] hidden;
        private boolean anyAdapter;
        private boolean anyHidden;
        private int size;

        public Builder(int capacity) {
            if (capacity <= 0) {
                throw new IllegalArgumentException("capacity must be positive: " + capacity);
            }
            slots = new int[capacity];
            positions = new int[capacity];
            tokens = new int[capacity];
            logits = new boolean[capacity];
            adapters = new int[capacity];
            hidden = new boolean[capacity];
        }

        public int capacity() {
            return slots.length;
        }

        public int size() {
            return size;
        }

        /** Appends a row without a named LoRA adapter; returns its index in the step. */
        public int add(int slot, int position, int token, boolean wantsLogits) {
            return add(slot, position, token, wantsLogits, 0);
        }

        /** Appends a row of a sequence computed with named LoRA adapter {@code adapter} (0: none); returns its index. */
        public int add(int slot, int position, int token, boolean wantsLogits, int adapter) {
            if (adapter < 0) {
                throw new IllegalArgumentException("negative LoRA adapter id " + adapter);
            }
            if (size == slots.length) {
                throw new IllegalStateException("step is full (" + slots.length + " rows)");
            }
            slots[size] = slot;
            positions[size] = position;
            tokens[size] = token;
            logits[size] = wantsLogits;
            adapters[size] = adapter;
            hidden[size] = false;
            anyAdapter |= adapter != 0;
            return size++;
        }

        /** Asks for the final hidden state of row {@code row} (already appended). */
        public void wantHidden(int row) {
            if (row < 0 || row >= size) {
                throw new IllegalArgumentException("row " + row + " outside the " + size + " rows so far");
            }
            hidden[row] = true;
            anyHidden = true;
        }

        /** Appends {@code promptTokens[from..to)} at positions {@code start..}, each row asking for its final hidden state. */
        public void addHiddenPrompt(int slot, int start, int[] promptTokens, int from, int to) {
            for (int i = from; i < to; i++) {
                wantHidden(add(slot, start + (i - from), promptTokens[i], false));
            }
        }

        /** Appends {@code promptTokens[from..to)} of one sequence at positions {@code start..}; logits for the last row only if asked. */
        public void addPrompt(int slot, int start, int[] promptTokens, int from, int to, boolean logitsForLast) {
            for (int i = from; i < to; i++) {
                add(slot, start + (i - from), promptTokens[i], logitsForLast && i == to - 1);
            }
        }

        public void clear() {
            size = 0;
            anyAdapter = false;
            anyHidden = false;
        }

        /** The rows so far as step 0 without block tables (a flat session, or tables already set on the session). */
        public StepBatch build() {
            return new StepBatch(0, new StepRows(Arrays.copyOf(slots, size), Arrays.copyOf(positions, size),
                    Arrays.copyOf(tokens, size), Arrays.copyOf(logits, size),
                    anyAdapter ? Arrays.copyOf(adapters, size) : new int[0],
                    anyHidden ? Arrays.copyOf(hidden, size) : new boolean[0]), List.of());
        }
    }
}
