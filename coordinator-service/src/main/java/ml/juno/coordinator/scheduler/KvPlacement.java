package ml.juno.coordinator.scheduler;

import java.util.Arrays;

/**
 * Where a row's KV lives, in block-id terms the engine or nodes resolve to memory: position {@code p} of the sequence
 * is slot {@code p % blockSize} of block {@code blockTable[p / blockSize]}, which is where the KV store writes and reads
 * it.
 *
 * @param blockSize  tokens per block
 * @param blockTable the sequence's blocks in position order, covering every position up to the chunk's end
 */
public record KvPlacement(int blockSize, int[] blockTable) {
    public KvPlacement {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be > 0");
        }
    }

    @Override
    public String toString() {
        return "KvPlacement[blockSize=" + blockSize + ", blocks=" + Arrays.toString(blockTable) + "]";
    }
}
