package ml.juno.coordinator.tokenizer;

/** Open-addressing set of longs (no boxing). {@link Long#MIN_VALUE} cannot be stored. */
final class LongSet {
    private long[] keys;
    private int size;

    LongSet(int expected) {
        keys = new long[Integer.highestOneBit(Math.max(8, expected * 2)) << 1];
        java.util.Arrays.fill(keys, Long.MIN_VALUE);
    }

    void add(long k) {
        if ((size + 1) * 2 > keys.length) {
            long[] old = keys;
            keys = new long[old.length * 2];
            java.util.Arrays.fill(keys, Long.MIN_VALUE);
            size = 0;
            for (long o : old) {
                if (o != Long.MIN_VALUE) {
                    add(o);
                }
            }
        }
        int m = keys.length - 1;
        int s = mix(k) & m;
        while (keys[s] != Long.MIN_VALUE) {
            if (keys[s] == k) {
                return;
            }
            s = (s + 1) & m;
        }
        keys[s] = k;
        size++;
    }

    boolean contains(long k) {
        int m = keys.length - 1;
        int s = mix(k) & m;
        while (true) {
            long cur = keys[s];
            if (cur == k) {
                return true;
            }
            if (cur == Long.MIN_VALUE) {
                return false;
            }
            s = (s + 1) & m;
        }
    }

    static int mix(long k) {
        k ^= k >>> 33;
        k *= 0xFF51AFD7ED558CCDL;
        k ^= k >>> 33;
        return (int) k;
    }
}
