package ml.juno.engine.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.kernel.cpu.NativeKernels;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Logits;
import ml.juno.engine.model.Model;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Streamed experts change where the bytes come from, never which bytes: the tiny qwen3moe models (4 experts, top 2,
 * 2 layers) give the mapped run's logits bit for bit with a RAM tier of 0 (every expert read every time, through
 * staging), of 2 slots (a few: evictions and refills every step) and of all experts, on the Java backend and on the
 * native one (whose packed Q4_K copies on AMX must follow a refilled slot: a stale copy would change the logits),
 * for three prompts, every prompt row and greedy decode steps.
 */
class ExpertStreamingTest {

    static final List<String> MODELS = List.of("tiny-qwen3moe-random-Q4_K_M.gguf", "tiny-qwen3moe-random-Q8_0.gguf",
            "tiny-qwen3moe-random-F16.gguf");

    static Path model(String name) {
        return Path.of(System.getProperty("juno.models.dir"), "testdata", "tiny-random", name);
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (String m : MODELS) {
            out.add(Arguments.of(m, "java"));
            if (NativeKernels.load().ok()) {
                out.add(Arguments.of(m, "native"));
            }
        }
        return out.stream();
    }

    static Backend.Factory backend(String kind) {
        return kind.equals("java") ? t -> new CpuBackend(2, null) : t -> new CpuBackend(2, NativeKernels.load().kernels());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void streamedExperts_giveTheMappedLogitsBitForBit_atEveryBudget(String name, String kind) throws Exception {
        Path file = model(name);
        List<float[]> mapped = run(file, backend(kind), null, null);
        long slot = slotBytes(file);
        record Budget(String what, ExpertBudget budget) {}
        for (Budget b : List.of(new Budget("0", ExpertBudget.ofBytes(0)), new Budget("2 slots", ExpertBudget.ofBytes(2 * slot)),
                new Budget("all", ExpertBudget.parse("100%")), new Budget("all, read when first used", ExpertBudget.parse("100%")))) {
            ExpertStats[] stats = new ExpertStats[1];
            List<float[]> streamed = run(file, backend(kind), b.budget(), stats,
                    ExpertStore.Options.defaults().withPreload(!b.what().endsWith("used")));
            assertSameLogits(mapped, streamed, name + " " + kind + " budget " + b.what());
            ExpertStats s = stats[0];
            assertTrue(s.healthy());
            assertTrue(s.traffic().bytesRead() + s.tier().preloadBytes() > 0, "experts were read");
            switch (b.what()) {
                case "0" -> {
                    assertEquals(0, s.tier().cacheSlots());
                    assertEquals(0, s.hits(), "nothing cached at budget 0");
                }
                case "2 slots" -> {
                    assertEquals(2, s.tier().cacheSlots());
                    assertTrue(s.misses() > 8, "8 experts in 2 slots: refills (" + s.misses() + " misses)");
                    assertTrue(s.hits() > 0, "some hits in 2 slots");
                }
                case "all" -> { // every expert read at open: the resident run's behaviour
                    assertEquals(8, s.tier().cacheSlots());
                    assertTrue(s.tier().preloadBytes() >= 8 * (slot - 3 * 4096), "all 8 experts read at open: " + s.tier());
                    assertEquals(0, s.misses(), "nothing read after open");
                    assertEquals(0, s.traffic().bytesRead());
                    assertEquals(1.0, s.hitRate());
                }
                default -> {
                    assertEquals(8, s.tier().cacheSlots());
                    assertEquals(0, s.tier().preloadBytes());
                    assertTrue(s.misses() <= 8, "each expert read once: " + s.misses());
                    assertTrue(s.hitRate() > 0.5, "hit rate " + s.hitRate());
                }
            }
        }
    }

    /**
     * Reads cut into pieces of one alignment unit each, and a store emptied after every prompt (what {@code juno bench
     * --cold} does before each timed run), change no bit: the mapped logits at 2 slots and at all experts (read again
     * at once when emptied); and after each emptying the experts are read again.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void smallReadsAndAnEmptiedStore_giveTheMappedLogitsBitForBit(String name, String kind) throws Exception {
        Path file = model(name);
        List<float[]> mapped = run(file, backend(kind), null, null);
        long slot = slotBytes(file);
        ExpertStore.Options d = ExpertStore.Options.defaults();
        ExpertStore.Options small = new ExpertStore.Options(d.readers(), d.staging(), d.direct(), d.decay(), d.pinShare(),
                false, true, 4096);
        for (ExpertBudget b : List.of(ExpertBudget.ofBytes(2 * slot), ExpertBudget.parse("100%"))) {
            ExpertStats[] stats = new ExpertStats[1];
            long[] readsBefore = new long[1];
            List<float[]> streamed = run(file, backend(kind), b, stats, small, (store, prompt) -> {
                long reads = store.stats().traffic().reads();
                if (prompt == 1) {
                    readsBefore[0] = reads;
                }
                store.empty();
                assertEquals(reads, store.stats().traffic().reads(), "telemetry keeps counting");
            });
            assertSameLogits(mapped, streamed, name + " " + kind + " budget " + b + ", emptied");
            ExpertStats s = stats[0];
            assertTrue(s.healthy());
            if (s.tier().cacheSlots() == 2) {
                assertTrue(s.traffic().reads() > readsBefore[0], "read again after emptying");
                assertTrue(s.traffic().reads() >= 2 * s.misses(), "each miss in several reads of 4 KiB: "
                        + s.traffic().reads() + " reads, " + s.misses() + " misses");
            } else {
                assertEquals(0, s.misses(), "a full cache, read again at once when emptied: no step misses");
            }
        }
    }

    /**
     * Reading the next layer's likely experts ahead (layer 0's input through layer 1's router, into cache slots while
     * layer 0 computes) changes only where bytes come from: the mapped logits bit for bit with a cache of 2 slots (one
     * slot a layer: guesses evict experts the step then misses), 4 and all; and experts are read ahead, and some of
     * them used by the layer they were read for.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void readingAhead_givesTheMappedLogitsBitForBit(String name, String kind) throws Exception {
        Path file = model(name);
        List<float[]> mapped = run(file, backend(kind), null, null);
        long slot = slotBytes(file);
        long prefetched = 0;
        long used = 0;
        for (ExpertBudget b : List.of(ExpertBudget.ofBytes(2 * slot), ExpertBudget.ofBytes(4 * slot), ExpertBudget.parse("100%"))) {
            ExpertStats[] stats = new ExpertStats[1];
            List<float[]> streamed = run(file, backend(kind), b, stats, ExpertStore.Options.defaults().withPrefetch(true));
            assertSameLogits(mapped, streamed, name + " " + kind + " " + stats[0] + ", reading ahead");
            ExpertStats s = stats[0];
            assertTrue(s.healthy(), s.failure());
            assertTrue(s.traffic().prefetchUsed() <= s.traffic().prefetched());
            prefetched += s.traffic().prefetched();
            used += s.traffic().prefetchUsed();
        }
        assertTrue(prefetched > 0, "experts were read ahead");
        assertTrue(used > 0, "some experts read ahead were used (" + prefetched + " read ahead)");
    }

    /**
     * The native backend packs Q4_K weights on their first product (AVX-512 variant) keyed by the matrix: when a slot's memory
     * is refilled with another expert and the old matrix is {@link Backend#forget forgotten}, a product over the new
     * matrix gives the other expert's result (the mapped one's bits), not the stale packed copy's, and the packed copies
     * do not pile up however often the memory is refilled.
     */
    @org.junit.jupiter.api.Test
    void refilledMemory_neverHitsAStalePackedCopy() throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            return; // the Java backend keeps nothing derived from weights
        }
        try (GgufFile f = GgufFile.open(model("tiny-qwen3moe-random-Q4_K_M.gguf"));
             Model m = Model.load(f, options(), t -> new CpuBackend(1, null));
             CpuBackend nat = new CpuBackend(1, l.kernels());
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            ml.juno.engine.model.block.GatedFfn[] ex = m.decoder().moeLayers().get(0).experts();
            ml.juno.engine.kernel.WeightMatrix w0 = ex[0].gate();
            java.lang.foreign.MemorySegment slot = arena.allocate(w0.data().byteSize(), 4096);
            float[] x = new float[w0.cols() * 4];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) Math.sin(i * 0.37);
            }
            int before = -1;
            for (int round = 0; round < 3; round++) {
                for (int e = 0; e < ex.length; e++) {
                    ml.juno.engine.kernel.WeightMatrix mapped = ex[e].gate();
                    slot.copyFrom(mapped.data().asSlice(0, slot.byteSize()));
                    var view = new ml.juno.engine.kernel.WeightMatrix(mapped.name(), mapped.type(), slot, mapped.rows(),
                            mapped.cols(), mapped.rowStride());
                    float[] fromSlot = new float[mapped.rows() * 4];
                    float[] fromMap = new float[mapped.rows() * 4];
                    nat.matmul(view, x, fromSlot, 4);
                    nat.matmul(mapped, x, fromMap, 4);
                    for (int i = 0; i < fromMap.length; i++) {
                        assertEquals(Float.floatToIntBits(fromMap[i]), Float.floatToIntBits(fromSlot[i]),
                                "expert " + e + " round " + round + " value " + i);
                    }
                    nat.forget(view);
                }
                if (round == 0) {
                    before = nat.packedCopies();
                } else {
                    assertEquals(before, nat.packedCopies(), "packed copies reused, not added");
                }
            }
        }
    }

    /**
     * {@code juno synth} with experts writes a qwen3moe file the engine runs (finite logits), whose experts stream
     * bit for bit at a budget of a few slots: the qwen3moe-mini preset's layout, shrunk.
     */
    @org.junit.jupiter.api.Test
    void synthesizedQwen3Moe_runsAndStreamsBitForBit(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        var preset = new ml.juno.engine.synth.SynthPreset("tiny-moe", 512, 256, 2, 4, 2, 512, 256, 1e6f, 1e-6f,
                new ml.juno.engine.synth.SynthPreset.Moe(16, 4, 256));
        Path file = tmp.resolve("tiny-moe.gguf");
        ml.juno.engine.synth.Synth.run(new ml.juno.engine.synth.SynthOptions(preset, "Q4_K_M", file, 7, null, 2),
                ml.juno.engine.quantize.ProgressListener.NONE);
        try (GgufFile f = GgufFile.open(file)) {
            assertEquals("qwen3moe", f.metadata().getString(ml.juno.engine.gguf.GgufKeys.GENERAL_ARCHITECTURE));
            assertEquals(List.of(256L, 256L, 16L), java.util.Arrays.stream(f.tensor("blk.1.ffn_up_exps.weight").shape()).boxed().toList());
        }
        List<float[]> mapped = run(file, backend("java"), null, null);
        for (float[] row : mapped) {
            for (float v : row) {
                assertTrue(Float.isFinite(v));
            }
        }
        List<float[]> streamed = run(file, backend("java"), ExpertBudget.ofBytes(3 * slotBytes(file)), null);
        for (int r = 0; r < mapped.size(); r++) {
            org.junit.jupiter.api.Assertions.assertArrayEquals(mapped.get(r), streamed.get(r), "row " + r);
        }
    }

    /** The slot size a store for {@code file} uses. */
    static long slotBytes(Path file) throws Exception {
        try (GgufFile f = GgufFile.open(file);
             Model m = Model.load(f, options(), t -> new CpuBackend(1, null))) {
            return m.streamExperts(f, ExpertBudget.ofBytes(0)).stats().tier().slotBytes();
        }
    }

    /** The streamed run's logits equal the mapped run's, bit for bit, row by row. */
    static void assertSameLogits(List<float[]> mapped, List<float[]> streamed, String what) {
        assertEquals(mapped.size(), streamed.size(), what + ": rows");
        for (int r = 0; r < mapped.size(); r++) {
            float[] x = mapped.get(r);
            float[] y = streamed.get(r);
            for (int i = 0; i < x.length; i++) {
                if (Float.floatToIntBits(x[i]) != Float.floatToIntBits(y[i])) {
                    throw new AssertionError(what + ": logits row " + r + " token " + i + ": mapped " + x[i] + ", streamed " + y[i]);
                }
            }
        }
    }

    static EngineOptions options() {
        return new EngineOptions(2, 64, KvType.F32, 32, 1);
    }

    /**
     * Three prompts of 13 tokens (all rows' logits) each followed by 4 greedy steps; {@code budget == null}: mapped.
     */
    static List<float[]> run(Path file, Backend.Factory backend, ExpertBudget budget, ExpertStats[] stats) throws Exception {
        return run(file, backend, budget, stats, ExpertStore.Options.defaults());
    }

    /** {@link #run(Path, Backend.Factory, ExpertBudget, ExpertStats[])} with explicit store options. */
    static List<float[]> run(Path file, Backend.Factory backend, ExpertBudget budget, ExpertStats[] stats,
                             ExpertStore.Options storeOptions) throws Exception {
        return run(file, backend, budget, stats, storeOptions, (store, prompt) -> { });
    }

    /** What a run does with its store before each prompt after the first. */
    interface BetweenPrompts {
        void at(ExpertStore store, int prompt);
    }

    /** {@link #run(Path, Backend.Factory, ExpertBudget, ExpertStats[], ExpertStore.Options)} calling {@code between}. */
    static List<float[]> run(Path file, Backend.Factory backend, ExpertBudget budget, ExpertStats[] stats,
                             ExpertStore.Options storeOptions, BetweenPrompts between) throws Exception {
        List<float[]> out = new ArrayList<>();
        try (GgufFile f = GgufFile.open(file);
             Model m = Model.load(f, options(), backend)) {
            ExpertStore store = null;
            if (budget != null) {
                store = m.streamExperts(f, budget, storeOptions);
            }
            try (InferenceSession s = m.newSession()) {
                int vocab = m.config().dims().vocab();
                StepBatch.Builder batch = new StepBatch.Builder(32);
                for (int p = 0; p < 3; p++) {
                    if (p > 0 && store != null) {
                        between.at(store, p);
                    }
                    batch.clear();
                    for (int i = 0; i < 13; i++) {
                        batch.add(0, i, 1 + (i * 7919 + p * 104729) % (vocab - 1), true);
                    }
                    Logits l = s.forward(batch.build());
                    int next = 0;
                    for (int r = 0; r < l.count(); r++) {
                        out.add(l.copyRow(r));
                        next = l.argmax(r);
                    }
                    for (int step = 0; step < 4; step++) {
                        batch.clear();
                        batch.add(0, 13 + step, next, true);
                        l = s.forward(batch.build());
                        out.add(l.copyRow(0));
                        next = l.argmax(0);
                    }
                }
            }
            if (stats != null) {
                stats[0] = m.expertStats();
            }
        }
        return out;
    }
}
