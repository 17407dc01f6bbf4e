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
    void invalidRangesAndSplits_areRefused() {
        assertThrows(IllegalArgumentException.class, () -> new LayerRange(3, 3));
        assertThrows(IllegalArgumentException.class, () -> new LayerRange(-1, 2));
        assertThrows(IllegalArgumentException.class, () -> LayerRange.balance(new long[] {1, 2}, 3));
    }
}
