package ml.juno.model.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class LayerRangeTest {

    @Test
    void balance_equalLayers_splitsEvenly() {
        long[] sizes = {10, 10, 10, 10, 10, 10};
        assertArrayEquals(new LayerRange[] {new LayerRange(0, 2), new LayerRange(2, 4), new LayerRange(4, 6)},
                LayerRange.balance(sizes, 3));
    }

    @Test
    void balance_heavyFirstLayer_givesItItsOwnPart() {
        long[] sizes = {100, 10, 10, 10, 10};
        LayerRange[] parts = LayerRange.balance(sizes, 2);
        assertEquals(new LayerRange(0, 1), parts[0]);
        assertEquals(new LayerRange(1, 5), parts[1]);
    }

    @Test
    void balance_coversEveryLayerOnceWithNonEmptyParts() {
        long[] sizes = {5, 1, 1, 1, 1, 1, 1, 9};
        for (int parts = 1; parts <= sizes.length; parts++) {
            LayerRange[] r = LayerRange.balance(sizes, parts);
            assertEquals(parts, r.length);
            assertEquals(0, r[0].start());
            assertEquals(sizes.length, r[parts - 1].end());
            for (int i = 1; i < parts; i++) {
                assertEquals(r[i - 1].end(), r[i].start());
            }
        }
    }

    @Test
    void balance_countsTheHeadWithTheLastPart() {
        long[] sizes = new long[22];
        java.util.Arrays.fill(sizes, 27);
        // TinyLlama Q4_K_M: the Q6_K output head weighs about two layers, so the first stage takes one layer more
        assertArrayEquals(new LayerRange[] {new LayerRange(0, 12), new LayerRange(12, 22)}, LayerRange.balance(sizes, 54, 2));
        assertArrayEquals(new LayerRange[] {new LayerRange(0, 11), new LayerRange(11, 22)}, LayerRange.balance(sizes, 0, 2));
        assertArrayEquals(new LayerRange[] {new LayerRange(0, 8), new LayerRange(8, 16), new LayerRange(16, 22)},
                LayerRange.balance(sizes, 54, 3));
        // a head heavier than all the layers still leaves the last part one layer
        assertArrayEquals(new LayerRange[] {new LayerRange(0, 3), new LayerRange(3, 4)},
                LayerRange.balance(new long[] {1, 1, 1, 1}, 100, 2));
        assertThrows(IllegalArgumentException.class, () -> LayerRange.balance(sizes, -1, 2));
    }

    @Test
    void invalidRangesAndSplits_areRefused() {
        assertThrows(IllegalArgumentException.class, () -> new LayerRange(3, 3));
        assertThrows(IllegalArgumentException.class, () -> new LayerRange(-1, 2));
        assertThrows(IllegalArgumentException.class, () -> LayerRange.balance(new long[] {1, 2}, 3));
    }
}
