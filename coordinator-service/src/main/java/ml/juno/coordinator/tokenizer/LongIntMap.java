package ml.juno.coordinator.tokenizer;

import java.util.Arrays;

/** Open-addressing map from long keys to int values (no boxing); {@link Long#MIN_VALUE} is reserved. */
final class LongIntMap {
    private static final long EMPTY = Long.MIN_VALUE;
    private long[] keys;
    private int[] values;
    private int size;

    LongIntMap(int expected) {
        int cap = Integer.highestOneBit(Math.max(8, expected * 2)) << 1;
        keys = new long[cap];
        values = new int[cap];
        Arrays.fill(keys, EMPTY);
    }

    /** Stores {@code v} unless the key is present already; returns the value now stored. */
    int putIfAbsent(long k, int v) {
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int m = keys.length - 1;
        int s = LongSet.mix(k) & m;
        while (keys[s] != EMPTY) {
            if (keys[s] == k) {
                return values[s];
            }
            s = (s + 1) & m;
        }
        keys[s] = k;
        values[s] = v;
        size++;
        return v;
    }

    /** The value for {@code k}, or {@code missing}. */
    int get(long k, int missing) {
        int m = keys.length - 1;
        int s = LongSet.mix(k) & m;
        while (true) {
            long cur = keys[s];
            if (cur == k) {
                return values[s];
            }
            if (cur == EMPTY) {
                return missing;
            }
            s = (s + 1) & m;
        }
    }

    int size() {
        return size;
    }

    private void grow() {
        long[] oldK = keys;
        int[] oldV = values;
        keys = new long[oldK.length * 2];
        values = new int[oldK.length * 2];
        Arrays.fill(keys, EMPTY);
        size = 0;
        for (int i = 0; i < oldK.length; i++) {
            if (oldK[i] != EMPTY) {
                putIfAbsent(oldK[i], oldV[i]);
            }
        }
    }
}
