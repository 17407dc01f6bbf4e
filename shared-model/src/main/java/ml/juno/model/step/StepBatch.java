package ml.juno.model.step;

import java.util.List;

/**
 * One forward step, the one shape it has from the scheduler's plan to the kernels: the rows (prefill chunks and decode
 * rows of several sequences together) and the block table of each slot that runs. Built once per step by the
 * coordinator, taken as it is by the in-process engine and (through {@code ProtoMapping}) by every node. A slot's
 * block table, once sent, stays in force on a node until it is replaced or released.
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
}
