package ml.juno.coordinator.scheduler;

import java.util.Arrays;

/**
 * Where a row's KV lives, in block-id terms the engine or nodes resolve to memory.
 *
 * @param blockSize   tokens per block
 * @param blockTable  the sequence's blocks in position order, covering every position up to the chunk's end
 * @param slotMapping for each token of the chunk, the KV slot to write: {@code block * blockSize + offset}
 */
public record KvPlacement(int blockSize, int[] blockTable, int[] slotMapping) {
    public KvPlacement {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be > 0");
        }
    }

    @Override
    public String toString() {
        return "KvPlacement[blocks=" + Arrays.toString(blockTable) + ", slots=" + Arrays.toString(slotMapping) + "]";
    }
}
