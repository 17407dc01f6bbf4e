package ml.juno.engine.step;

import java.util.Arrays;

/**
 * The block table of one sequence slot: position {@code p} of the slot's sequence lives in block {@code blocks[p /
 * blockSize]} at offset {@code p % blockSize}, where the KV store writes and reads it.
 *
 * @param slot   the sequence slot
 * @param blocks KV block ids in position order
 */
public record SlotBlocks(int slot, int[] blocks) {
    public SlotBlocks {
        if (slot < 0) {
            throw new IllegalArgumentException("slot " + slot + " is negative");
        }
        for (int b : blocks) {
            if (b < 0) {
                throw new IllegalArgumentException("slot " + slot + ": block id " + b + " is negative");
            }
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SlotBlocks s && s.slot == slot && Arrays.equals(s.blocks, blocks);
    }

    @Override
    public int hashCode() {
        return 31 * slot + Arrays.hashCode(blocks);
    }

    @Override
    public String toString() {
        return "SlotBlocks[" + slot + ": " + Arrays.toString(blocks) + "]";
    }
}
