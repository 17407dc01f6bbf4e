package ml.juno.model.shard;

/**
 * A contiguous block of transformer layers, {@code [start, end)}, that one pipeline-parallel node serves.
 * The first node also embeds tokens; the node whose range ends at the model's layer count also applies
 * the final norm and the output projection.
 */
public record LayerRange(int start, int end) {

    public LayerRange {
        if (start < 0) {
            throw new IllegalArgumentException("layer range start must be >= 0, got " + start);
        }
        if (end <= start) {
            throw new IllegalArgumentException("layer range must be non-empty, got [" + start + ", " + end + ")");
        }
    }

    public int size() {
        return end - start;
    }

    public boolean contains(int layer) {
        return layer >= start && layer < end;
    }

    /**
     * Splits {@code layerBytes.length} layers into {@code parts} contiguous, non-empty ranges whose byte
     * totals are as even as a greedy left-to-right cut can make them.
     */
    public static LayerRange[] balance(long[] layerBytes, int parts) {
        return balance(layerBytes, 0, parts);
    }

    /**
     * As {@link #balance(long[], int)}, where the last range also carries {@code lastBytes} of work that goes with it
     * (the output head, which the node serving the last layer applies): the earlier ranges take more layers so that
     * the byte totals, the last one's head included, come out as even as the greedy cut can make them.
     */
    public static LayerRange[] balance(long[] layerBytes, long lastBytes, int parts) {
        int n = layerBytes.length;
        if (lastBytes < 0) {
            throw new IllegalArgumentException("negative output head size " + lastBytes);
        }
        if (parts < 1 || parts > n) {
            throw new IllegalArgumentException("cannot split " + n + " layers into " + parts + " parts");
        }
        long total = lastBytes;
        for (long b : layerBytes) {
            if (b < 0) {
                throw new IllegalArgumentException("negative layer size " + b);
            }
            total += b;
        }
        LayerRange[] out = new LayerRange[parts];
        int start = 0;
        long done = 0;
        for (int p = 0; p < parts; p++) {
            int remainingParts = parts - p;
            if (remainingParts == 1) {
                out[p] = new LayerRange(start, n);
                break;
            }
            long target = done + (total - done) / remainingParts;
            int end = start + 1;
            long acc = done + layerBytes[start];
            // extend while the next layer brings us closer to the target and leaves a layer for each remaining part
            while (end < n - (remainingParts - 1)
                    && Math.abs(acc + layerBytes[end] - target) <= Math.abs(acc - target)) {
                acc += layerBytes[end];
                end++;
            }
            out[p] = new LayerRange(start, end);
            done = acc;
            start = end;
        }
        return out;
    }
}
