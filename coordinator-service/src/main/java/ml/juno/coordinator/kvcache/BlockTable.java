package ml.juno.coordinator.kvcache;

import java.util.Arrays;

/**
 * The blocks of one sequence, in position order: token at position {@code p} lives in block
 * {@code block(p / blockSize)} at offset {@code p % blockSize}. Also remembers the chain hash of each
 * full block already committed, so the next block's hash continues the chain. Owned by one sequence;
 * changed only through {@link KvCacheManager}.
 */
public final class BlockTable {
    private int[] blocks = new int[8];
    private long[] hashes = new long[8]; // [count] chain hash of block i, valid for i < hashedCount
    private int count;
    private int hashedCount;

    public int blockCount() {
        return count;
    }

    public int block(int index) {
        if (index < 0 || index >= count) {
            throw new IndexOutOfBoundsException(index);
        }
        return blocks[index];
    }

    /** A copy of the block ids, for a step plan. */
    public int[] toArray() {
        return Arrays.copyOf(blocks, count);
    }

    /** Number of leading blocks whose chain hash is known (full and committed, or cache hits). */
    public int hashedCount() {
        return hashedCount;
    }

    long hash(int index) {
        return hashes[index];
    }

    void add(int block) {
        if (count == blocks.length) {
            blocks = Arrays.copyOf(blocks, count * 2);
            hashes = Arrays.copyOf(hashes, count * 2);
        }
        blocks[count++] = block;
    }

    void setHash(int index, long hash) {
        if (index != hashedCount) {
            throw new IllegalStateException("block hashes are set in order: expected " + hashedCount + ", got " + index);
        }
        hashes[index] = hash;
        hashedCount++;
    }

    int removeLast() {
        int b = blocks[--count];
        if (hashedCount > count) {
            hashedCount = count;
        }
        return b;
    }

    @Override
    public String toString() {
        return "BlockTable" + Arrays.toString(toArray());
    }
}
