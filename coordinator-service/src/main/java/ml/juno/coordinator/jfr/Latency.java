package ml.juno.coordinator.jfr;

import java.util.Arrays;

/**
 * Distribution of one duration over a recording, in milliseconds; percentiles are nearest-rank.
 *
 * @param count how many samples
 */
public record Latency(long count, double meanMs, double p50Ms, double p95Ms, double p99Ms, double maxMs) {
    public static final Latency NONE = new Latency(0, 0, 0, 0, 0, 0);

    /** The distribution of {@code nanos[0..n)} (sorted in place). */
    public static Latency of(long[] nanos, int n) {
        if (n == 0) {
            return NONE;
        }
        Arrays.sort(nanos, 0, n);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += nanos[i];
        }
        return new Latency(n, sum / n / 1e6, rank(nanos, n, 0.50), rank(nanos, n, 0.95), rank(nanos, n, 0.99),
                nanos[n - 1] / 1e6);
    }

    private static double rank(long[] sorted, int n, double p) {
        int i = (int) Math.ceil(p * n) - 1;
        return sorted[Math.max(0, Math.min(n - 1, i))] / 1e6;
    }
}
