package ml.juno.coordinator.scheduler;

import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.step.SlotBlocks;
import ml.juno.engine.step.StepBatch;
import ml.juno.engine.step.StepRows;

/**
 * What one forward step computes: decode rows first, then prefill chunks. The engine returns logits for
 * the rows with {@code needsLogits}, in row order (see {@link StepResult.Logits}).
 *
 * @param stepId increasing step number
 * @param rows   the rows of the batch
 */
public record StepPlan(long stepId, List<ScheduledRow> rows) {
    public StepPlan {
        rows = List.copyOf(rows);
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }

    /** Tokens computed by this step, all rows together. */
    public int totalTokens() {
        int n = 0;
        for (ScheduledRow r : rows) {
            n += r.tokenCount();
        }
        return n;
    }

    /**
     * This plan as a {@link StepBatch}: every token a row, logits wanted on the last token of each row that samples and on every scored token, each
     * row's block table. Not for an empty plan.
     */
    public StepBatch batch() {
        int n = totalTokens();
        int[] slots = new int[n];
        int[] positions = new int[n];
        int[] tokens = new int[n];
        boolean[] logits = new boolean[n];
        int[] adapters = new int[n];
        boolean[] hidden = new boolean[n];
        boolean anyAdapter = false;
        boolean anyHidden = false;
        List<SlotBlocks> tables = new ArrayList<>(rows.size());
        int k = 0;
        for (ScheduledRow r : rows) {
            TokenChunk c = r.chunk();
            int[] ids = c.tokenIds();
            for (int i = 0; i < ids.length; i++, k++) {
                slots[k] = r.slot();
                positions[k] = c.position(i);
                tokens[k] = ids[i];
                logits[k] = i < c.scored().length || (c.needsLogits() && i == ids.length - 1);
                adapters[k] = r.adapter();
                anyAdapter |= r.adapter() != 0;
                hidden[k] = c.needsHidden(i);
                anyHidden |= hidden[k];
            }
            tables.add(new SlotBlocks(r.slot(), r.kv().blockTable()));
        }
        StepRows stepRows = new StepRows(slots, positions, tokens, logits, anyAdapter ? adapters : new int[0],
                anyHidden ? hidden : new boolean[0]);
        return new StepBatch(stepId, stepRows, tables);
    }

    /** Tokens whose final hidden states the engine must return (embedding rows), all rows together. */
    public int hiddenRowCount() {
        int n = 0;
        for (ScheduledRow r : rows) {
            n += r.chunk().hiddenCount();
        }
        return n;
    }

    /** Logit rows the engine must compute: the sampling rows and every scored prompt token, in token order. */
    public int logitRowCount() {
        int n = 0;
        for (ScheduledRow r : rows) {
            n += r.chunk().logitRows();
        }
        return n;
    }

    /** Rows that sample a token ({@code needsLogits}): the rows of the step's {@link StepResult.Tokens}. */
    public int sampledRowCount() {
        int n = 0;
        for (ScheduledRow r : rows) {
            if (r.needsLogits()) {
                n++;
            }
        }
        return n;
    }
}
