package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.ExpertBatch;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Backend#experts}: however the native backend spreads a layer step's experts over its threads (whole experts
 * per worker, or an expert with more than a fair share of the rows alone with its products split over the team), each
 * expert's weighted outputs are the bits the Java kernels give running the experts one by one; and no expert weight
 * is packed (a packed copy of every expert would double an MoE model's memory).
 */
class ExpertsTest {
    static final int DIM = 256;
    static final int WIDTH = 512;
    static final int EXPERTS = 6;
    static final int USED = 2;
    static final int BATCH = 9;

    @ParameterizedTest(name = "gate {0}, up {1}, down {2}")
    @CsvSource({"Q4_K, Q4_K, Q6_K", "Q4_K, Q5_K, Q4_K", "Q8_0, Q8_0, Q8_0", "F16, F16, F16"})
    void nativeExperts_giveTheJavaBitsWhateverTheThreads(GgmlType gateType, GgmlType upType, GgmlType downType) {
        NativeKernels.Loaded l = NativeKernels.load();
        WeightMatrix[][] w = new WeightMatrix[EXPERTS][3];
        for (int e = 0; e < EXPERTS; e++) {
            w[e][0] = WeightMatrix.dense("gate" + e, gateType, RandomBlocks.of(gateType, WIDTH, DIM, 10 * e + 1), WIDTH, DIM);
            w[e][1] = WeightMatrix.dense("up" + e, upType, RandomBlocks.of(upType, WIDTH, DIM, 10 * e + 2), WIDTH, DIM);
            w[e][2] = WeightMatrix.dense("down" + e, downType, RandomBlocks.of(downType, DIM, WIDTH, 10 * e + 3), DIM, WIDTH);
        }
        float[] expected;
        try (CpuBackend java = new CpuBackend(1, null)) {
            expected = run(java, w, false);
        }
        float[] serial = serial(w, false);
        for (int i = 0; i < serial.length; i++) {
            assertEquals(Float.floatToIntBits(serial[i]), Float.floatToIntBits(expected[i]), "one Java thread, value " + i);
        }
        // the Java backend spreads experts over its workers as the native one does: 2 threads all together, 3 expert 0
        // alone and the others together; the bits of the experts run one by one on one thread
        for (int threads : new int[] {2, 3}) {
            try (CpuBackend java = new CpuBackend(threads, null)) {
                for (boolean gelu : new boolean[] {false, true}) {
                    float[] reference = gelu ? serial(w, true) : expected;
                    float[] got = run(java, w, gelu);
                    for (int i = 0; i < got.length; i++) {
                        if (Float.floatToIntBits(reference[i]) != Float.floatToIntBits(got[i])) {
                            throw new AssertionError(threads + " Java threads, gelu " + gelu + ": value " + i
                                    + " (choice " + i / DIM + "): one by one " + reference[i] + ", together " + got[i]);
                        }
                    }
                }
            }
        }
        boolean anyNonZero = false;
        for (float v : expected) {
            assertTrue(Float.isFinite(v));
            anyNonZero |= v != 0f;
        }
        assertTrue(anyNonZero, "the experts computed something");
        if (!l.ok()) {
            return; // the Java backend is the reference; nothing else to compare
        }
        // 1 thread: every expert alone; 2: all together (expert 0's 9 rows are half of the 18 choices); 3: expert 0
        // alone (9 · 3 > 18), the others together
        for (int threads : new int[] {1, 2, 3}) {
            try (CpuBackend nat = new CpuBackend(threads, l.kernels())) {
                for (boolean gelu : new boolean[] {false, true}) {
                    float[] reference;
                    try (CpuBackend java = new CpuBackend(1, null)) {
                        reference = run(java, w, gelu);
                    }
                    float[] got = run(nat, w, gelu);
                    for (int i = 0; i < got.length; i++) {
                        if (Float.floatToIntBits(reference[i]) != Float.floatToIntBits(got[i])) {
                            throw new AssertionError(threads + " threads, gelu " + gelu + ": value " + i + " (choice "
                                    + i / DIM + "): java " + reference[i] + ", native " + got[i]);
                        }
                    }
                }
                assertEquals(0, nat.packedCopies(), "expert weights are used as stored, never packed");
            }
        }
    }

    /** The experts one after another on one Java thread: {@link Backend#experts}'s default, the reference. */
    static float[] serial(WeightMatrix[][] w, boolean gelu) {
        try (CpuBackend java = new CpuBackend(1, null)) {
            return run(oneByOne(java), w, gelu);
        }
    }

    /**
     * Incoming experts (bytes still arriving, {@link ExpertBatch#addIncoming}): every backend, however it spreads them,
     * waits for each incoming expert exactly once, on whatever thread computes it, never for a present one, and gives
     * the bits of the experts all present; an expert whose bytes failed is skipped (its rows untouched) while the
     * others are still computed.
     */
    @org.junit.jupiter.api.Test
    void incomingExperts_areWaitedForOnce_andGiveTheSameBits() {
        NativeKernels.Loaded l = NativeKernels.load();
        WeightMatrix[][] w = new WeightMatrix[EXPERTS][3];
        for (int e = 0; e < EXPERTS; e++) {
            w[e][0] = WeightMatrix.dense("gate" + e, GgmlType.Q4_K, RandomBlocks.of(GgmlType.Q4_K, WIDTH, DIM, 10 * e + 1), WIDTH, DIM);
            w[e][1] = WeightMatrix.dense("up" + e, GgmlType.Q4_K, RandomBlocks.of(GgmlType.Q4_K, WIDTH, DIM, 10 * e + 2), WIDTH, DIM);
            w[e][2] = WeightMatrix.dense("down" + e, GgmlType.Q6_K, RandomBlocks.of(GgmlType.Q6_K, DIM, WIDTH, 10 * e + 3), DIM, WIDTH);
        }
        float[] reference = serial(w, false);
        boolean[] incoming = {true, false, true, false, true, false}; // expert 0 (9 rows) runs alone with 3 threads
        List<Backend> backends = new ArrayList<>();
        for (int threads : new int[] {1, 2, 3}) {
            backends.add(new CpuBackend(threads, null));
            if (l.ok()) {
                backends.add(new CpuBackend(threads, l.kernels()));
            }
        }
        try {
            for (Backend b : backends) {
                for (int failing : new int[] {-1, 4, 0}) {
                    java.util.concurrent.atomic.AtomicIntegerArray waits = new java.util.concurrent.atomic.AtomicIntegerArray(EXPERTS);
                    ExpertBatch.Arrivals arrivals = id -> {
                        waits.incrementAndGet(id);
                        java.util.concurrent.locks.LockSupport.parkNanos(2_000_000); // the bytes take a while
                        return id != failing;
                    };
                    float[] got = run(b, w, false, incoming, arrivals);
                    String what = b.name() + " " + b.threads() + " threads, expert " + failing + " failing";
                    for (int e = 0; e < EXPERTS; e++) {
                        assertEquals(incoming[e] ? 1 : 0, waits.get(e), what + ": waits for expert " + e);
                    }
                    for (int i = 0; i < got.length; i++) {
                        int choice = i / DIM;
                        int expert = choice % USED == 0 ? 0 : 1 + (choice / USED) % 5;
                        if (expert == failing) {
                            assertTrue(Float.isNaN(got[i]), what + ": a failed expert's rows stay untouched, value " + i);
                        } else if (Float.floatToIntBits(reference[i]) != Float.floatToIntBits(got[i])) {
                            throw new AssertionError(what + ": value " + i + " (choice " + choice + "): present "
                                    + reference[i] + ", incoming " + got[i]);
                        }
                    }
                }
            }
        } finally {
            for (Backend b : backends) {
                b.close();
            }
        }
        // the default way (one by one) waits too, and skips what failed
        java.util.concurrent.atomic.AtomicInteger waited = new java.util.concurrent.atomic.AtomicInteger();
        try (CpuBackend java = new CpuBackend(1, null)) {
            Backend plain = oneByOne(java);
            float[] got = run(plain, w, false, incoming, id -> waited.incrementAndGet() > 0);
            assertEquals(3, waited.get());
            for (int i = 0; i < got.length; i++) {
                assertEquals(Float.floatToIntBits(reference[i]), Float.floatToIntBits(got[i]), "one by one, value " + i);
            }
        }
    }

    /** Backend#experts' default way (one expert after another) over {@code java}'s products. */
    static Backend oneByOne(CpuBackend java) {
        return new Backend() {
            // only what Backend#experts' default calls; the rest is never reached
            @Override public void matmul(WeightMatrix m, float[] x, float[] out, int batch) { java.matmul(m, x, out, batch); }
            @Override public void swiglu(float[] g, float[] u, int rows, int cols) { java.swiglu(g, u, rows, cols); }
            @Override public void geglu(float[] g, float[] u, int rows, int cols) { java.geglu(g, u, rows, cols); }
            @Override public String name() { return "one-by-one"; }
            @Override public void close() {}
            @Override public int threads() { return 1; }
            @Override public void embed(WeightMatrix t, int token, float[] out, int o) { throw new UnsupportedOperationException(); }
            @Override public void rmsNorm(float[] x, float[] wt, float eps, float[] out, int batch, int dim) { throw new UnsupportedOperationException(); }
            @Override public void rope(float[] x, ml.juno.engine.kernel.RopeShape sh, int batch, float[] cos, float[] sin) { throw new UnsupportedOperationException(); }
            @Override public void attention(ml.juno.engine.kv.KvCache c, int l, ml.juno.engine.kernel.AttentionShape sh,
                    ml.juno.engine.kernel.BatchRows r, float[] q, float[] out) { throw new UnsupportedOperationException(); }
            @Override public void attention(ml.juno.engine.kv.KvCache c, int l, ml.juno.engine.kernel.AttentionShape sh,
                    ml.juno.engine.kernel.BatchRows r, float[] q, float[] out, int window) { throw new UnsupportedOperationException(); }
            @Override public void add(float[] acc, float[] x, int n) { throw new UnsupportedOperationException(); }
            @Override public void addBias(float[] x, float[] bias, int rows, int width) { throw new UnsupportedOperationException(); }
        };
    }

    /** Row b routes to expert 0 and to expert 1 + b % 5 (weights 0.7 / 0.3); returns the mixed outputs. */
    static float[] run(Backend backend, WeightMatrix[][] w, boolean gelu) {
        return run(backend, w, gelu, new boolean[EXPERTS], null);
    }

    /** {@link #run}, the experts {@code incoming} added as incoming ({@code arrivals} waits for them); mixed starts NaN. */
    static float[] run(Backend backend, WeightMatrix[][] w, boolean gelu, boolean[] incoming, ExpertBatch.Arrivals arrivals) {
        float[] x = new float[BATCH * DIM];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) Math.sin(i * 0.37) * 2f;
        }
        List<List<Integer>> byExpert = new ArrayList<>();
        for (int e = 0; e < EXPERTS; e++) {
            byExpert.add(new ArrayList<>());
        }
        float[] weights = new float[BATCH * USED];
        for (int b = 0; b < BATCH; b++) {
            byExpert.get(0).add(b * USED);
            byExpert.get(1 + b % 5).add(b * USED + 1);
            weights[b * USED] = 0.7f;
            weights[b * USED + 1] = 0.3f;
        }
        int[] choices = new int[BATCH * USED];
        int[] from = new int[EXPERTS];
        int n = 0;
        for (int e = 0; e < EXPERTS; e++) {
            from[e] = n;
            for (int c : byExpert.get(e)) {
                choices[n++] = c;
            }
        }
        float[] mixed = new float[BATCH * USED * DIM];
        java.util.Arrays.fill(mixed, Float.NaN);
        ExpertBatch eb = new ExpertBatch(EXPERTS, DIM, USED, new ExpertBatch.Buffers(x, choices, weights, mixed,
                new float[BATCH * DIM], new float[BATCH * DIM], new float[BATCH * WIDTH], new float[BATCH * WIDTH]));
        eb.clear(gelu);
        for (int e = EXPERTS - 1; e >= 0; e--) { // any order: each expert writes only its own choices
            if (incoming[e]) {
                eb.addIncoming(e, w[e][0], w[e][1], w[e][2], from[e], byExpert.get(e).size(), arrivals);
            } else {
                eb.add(e, w[e][0], w[e][1], w[e][2], from[e], byExpert.get(e).size());
            }
        }
        backend.experts(eb);
        return mixed;
    }
}
