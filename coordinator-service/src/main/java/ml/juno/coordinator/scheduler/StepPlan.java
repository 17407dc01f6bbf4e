package ml.juno.coordinator.scheduler;

import java.util.List;

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

    /** Rows whose logits the engine must return. */
    public int logitRowCount() {
        int n = 0;
        for (ScheduledRow r : rows) {
            if (r.needsLogits()) {
                n++;
            }
        }
        return n;
    }
}
