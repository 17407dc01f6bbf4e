package ml.juno.engine.moe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.jfr.ExpertStepEvent;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.HugeMemory;
import ml.juno.engine.model.block.ExpertSource;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.MoeFfn;

/**
 * The routed experts of a shard's MoE layers, streamed from the GGUF file through a RAM tier instead of the memory
 * map. The tier is {@code budget / slot} fixed-size cache slots (off-heap, allocated once; a slot holds one expert's
 * gate/up/down, aligned) plus a few staging slots (the reads in flight beyond the cache: with a budget of 0 every
 * expert goes through them). Per layer step the union of the experts the batch routes to is looked up once; the
 * missing ones are read in expert order (file order within each tensor), all at once, by the {@link ExpertReader}'s
 * threads; the layer computes the experts already in RAM while they are read, then the others as they arrive, each
 * into its own rows, so results never depend on read timing. The matrices
 * the kernels get are the mapped ones' names, types, shapes and bytes over slot memory: logits are bit-identical to
 * the mapped run. When a slot is refilled, the backend is told to {@link Backend#forget} what it derived from the old
 * bytes (packed copies).
 *
 * <p>Policy: a heat ledger (per layer, per expert: rows routed, decayed by {@code decay} per step of that layer) marks
 * the hottest {@code pinShare} of the cache slots pinned (recomputed every step); a miss takes a free cache slot, else
 * evicts the least recently used unpinned slot, else goes through staging (read for this step only). The budget is
 * never exceeded. One inference thread drives a store.
 */
public final class ExpertStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ExpertStore.class.getName());
    /** Tokens per window of the distinct-experts figure. */
    public static final int WINDOW = 64;

    /**
     * Tuning: reader threads, staging slots (0: twice the experts a token uses), whether to try {@code O_DIRECT}, the
     * heat ledger's decay per step and the share of cache slots the hottest experts keep pinned.
     */
    public record Options(int readers, int staging, boolean direct, float decay, float pinShare, boolean prefetch,
                          boolean preload, int chunk) {
        /** Reads cut into pieces of at most this many bytes by default (rounded to the alignment). */
        public static final int CHUNK = 256 * 1024;

        /** Without prefetching; a cache that holds every expert is filled at open. */
        public Options(int readers, int staging, boolean direct, float decay, float pinShare) {
            this(readers, staging, direct, decay, pinShare, false, true, CHUNK);
        }

        public Options {
            if (readers < 1 || staging < 0 || !(decay > 0 && decay <= 1) || !(pinShare >= 0 && pinShare < 1) || chunk < 0) {
                throw new IllegalArgumentException("bad expert store options: " + readers + " readers, " + staging
                        + " staging slots, decay " + decay + ", pinned share " + pinShare + ", read size " + chunk);
            }
        }

        /**
         * 16 readers, reads of at most {@link #CHUNK} bytes, automatic staging, O_DIRECT, decay 0.98, half the cache pinnable, no prefetching, a cache that
         * holds every expert filled at open; {@code -Djuno.experts.readers}, {@code .staging}, {@code .direct},
         * {@code .decay}, {@code .pinned}, {@code .prefetch}, {@code .preload}, {@code .chunk} (bytes per read; 0:
         * one read per run of adjacent matrices) override.
         */
        public static Options defaults() {
            return new Options(Integer.getInteger("juno.experts.readers", 16), Integer.getInteger("juno.experts.staging", 0),
                    !"false".equals(System.getProperty("juno.experts.direct")),
                    Float.parseFloat(System.getProperty("juno.experts.decay", "0.98")),
                    Float.parseFloat(System.getProperty("juno.experts.pinned", "0.5")),
                    Boolean.getBoolean("juno.experts.prefetch"),
                    !"false".equals(System.getProperty("juno.experts.preload")),
                    Integer.getInteger("juno.experts.chunk", CHUNK));
        }

        /** These options with prefetching on or off. */
        public Options withPrefetch(boolean on) {
            return new Options(readers, staging, direct, decay, pinShare, on, preload, chunk);
        }

        /** These options with filling a cache that holds every expert at open, or not. */
        public Options withPreload(boolean on) {
            return new Options(readers, staging, direct, decay, pinShare, prefetch, on, chunk);
        }
    }

    /** The stores open in this process, for metrics exporters ({@link #openStats}). */
    private static final java.util.concurrent.CopyOnWriteArrayList<ExpertStore> OPEN = new java.util.concurrent.CopyOnWriteArrayList<>();

    private final Layer[] layers;
    private final int[] modelLayer;
    private final Backend backend;
    /** Each layer's router, for reading the next layer's likely experts ahead ({@code null} entries: no prefetching). */
    private final ml.juno.engine.kernel.WeightMatrix[] routers;
    private final boolean prefetch;
    /** Router logits of the next layer for a step's rows (grown once, reused). */
    private float[] aheadLogits = new float[0];
    private final boolean[] aheadPicked;
    /** Prefetched slots no step claimed, still being read: released once their reads are done. */
    private final Slot[] settling;
    private int settlingCount;
    private long prefetched;
    private long prefetchUsed;
    /** Bytes read at open to fill a cache that holds every expert, and how long it took (0: no preload). */
    private long preloadBytes;
    private long preloadNanos;
    private final ExpertReader reader;
    private final Arena arena;
    private final Slot[] cache;
    private final Slot[] staging;
    private final int[] freeCache;
    private int freeCacheCount;
    private final int[] freeStaging;
    private int freeStagingCount;
    private final long budget;
    private final long slotBytes;
    private final float decay;
    private final int pinCount;
    private float pinThreshold = Float.POSITIVE_INFINITY;
    private final float[] heatScratch;
    private long tick;
    private final long fileSize;
    private final FileTime fileTime;
    private volatile String failure;

    // telemetry (written by the inference thread; read as a snapshot by others)
    private final long[] hits;
    private final long[] misses;
    private long tokens;
    private long steps;
    private long readWaitNanos;
    /** Thread time the compute team spent in {@link Layer#awaitBytes} this layer step (any thread adds to it). */
    private final java.util.concurrent.atomic.AtomicLong teamWaitNanos = new java.util.concurrent.atomic.AtomicLong();
    private long computeNanos;
    private final long[][] windowBits;
    private int windowTokens;
    private double uniqueSum;
    private long windows;
    private int maxInFlight;
    // the current step, for its JFR event
    private ExpertStepEvent event;
    private long stepHits;
    private long stepMisses;
    private long stepBytes;
    private long stepWait;
    private long stepCompute;
    private long stepRows;
    private boolean fileChecked;

    private ExpertStore(GgufFile file, List<MoeFfn> moe, int[] modelLayer, Backend backend, ExpertBudget budget,
                        Options o) throws IOException {
        this.backend = backend;
        this.modelLayer = modelLayer.clone();
        this.prefetch = o.prefetch();
        this.routers = new ml.juno.engine.kernel.WeightMatrix[moe.size()];
        for (int l = 0; l < moe.size(); l++) {
            routers[l] = moe.get(l).router();
        }
        this.decay = o.decay();
        this.fileSize = Files.size(file.path());
        this.fileTime = Files.getLastModifiedTime(file.path());
        int readers = o.readers();
        int maxUsed = 1;
        int maxExperts = 1;
        for (MoeFfn m : moe) {
            maxUsed = Math.max(maxUsed, m.used());
            maxExperts = Math.max(maxExperts, m.experts().length);
        }
        int stagingSlots = o.staging() > 0 ? o.staging() : 2 * maxUsed;
        // the reader decides the alignment (O_DIRECT's block size); plans are made once it is known
        ExpertReader r = new ExpertReader(file.path(), readers, 64 * 1024, o.direct());
        try {
            ExpertPlan[][] plans = new ExpertPlan[moe.size()][];
            long slot = 0;
            long all = 0;
            int maxReads = 1;
            int experts = 0;
            for (int l = 0; l < plans.length; l++) {
                GatedFfn[] ex = moe.get(l).experts();
                plans[l] = new ExpertPlan[ex.length];
                for (int e = 0; e < ex.length; e++) {
                    plans[l][e] = ExpertPlan.of(ex[e], file.segment(), r.alignment(), chunk(o.chunk(), r.alignment()));
                    maxReads = Math.max(maxReads, plans[l][e].runPosition().length);
                    slot = Math.max(slot, plans[l][e].slotBytes());
                    all += plans[l][e].expertBytes();
                }
                experts += ex.length;
            }
            this.slotBytes = slot;
            this.budget = budget.resolve(slot * experts); // a share is of the tier that holds every expert
            int cacheSlots = (int) Math.min(experts, this.budget / slot);
            this.arena = Arena.ofShared();
            long slotsBytes = slot * (cacheSlots + stagingSlots);
            MemorySegment mem = Boolean.parseBoolean(System.getProperty("juno.experts.huge", "true"))
                    ? HugeMemory.allocate(arena, slotsBytes, r.alignment()) : arena.allocate(Math.max(1, slotsBytes), r.alignment());
            this.cache = new Slot[cacheSlots];
            this.freeCache = new int[cacheSlots];
            for (int i = 0; i < cacheSlots; i++) {
                cache[i] = new Slot(i, true, mem.asSlice(i * slot, slot), maxReads);
                freeCache[i] = cacheSlots - 1 - i;
            }
            this.freeCacheCount = cacheSlots;
            this.staging = new Slot[stagingSlots];
            this.freeStaging = new int[stagingSlots];
            for (int i = 0; i < stagingSlots; i++) {
                staging[i] = new Slot(i, false, mem.asSlice((cacheSlots + i) * slot, slot), maxReads);
                freeStaging[i] = stagingSlots - 1 - i;
            }
            this.freeStagingCount = stagingSlots;
            this.pinCount = (int) (cacheSlots * o.pinShare());
            this.heatScratch = new float[cacheSlots];
            this.layers = new Layer[plans.length];
            for (int l = 0; l < plans.length; l++) {
                layers[l] = new Layer(l, plans[l], moe.get(l).used());
            }
            this.hits = new long[plans.length];
            this.misses = new long[plans.length];
            this.windowBits = new long[plans.length][(maxExperts + 63) / 64];
            this.aheadPicked = new boolean[maxExperts];
            this.settling = new Slot[cacheSlots];
            this.reader = r;
            LOG.log(System.Logger.Level.INFO, String.format(java.util.Locale.ROOT,
                    "expert streaming: %d MoE layers, %.1f MiB of experts; cache %.1f MiB = %d slots of %.2f MiB (+%d staging), "
                            + "%d readers, %s%s", plans.length, all / 1048576.0, this.budget / 1048576.0, cacheSlots,
                    slot / 1048576.0, stagingSlots, readers, r.direct() ? "O_DIRECT" : "page cache",
                    prefetch ? ", next layer's likely experts read ahead" : ""));
        } catch (RuntimeException | Error e) {
            r.close();
            throw e;
        }
    }

    /**
     * A store for the experts of {@code moe} (the shard's MoE layers in order; {@code modelLayer[i]} is layer
     * {@code i}'s index in the model, for telemetry), read from {@code file}, installed into each layer with
     * {@link MoeFfn#streamFrom}. Close it before the backend.
     */
    public static ExpertStore attach(GgufFile file, List<MoeFfn> moe, int[] modelLayer, Backend backend,
                                     ExpertBudget budget, Options options) {
        if (file.path() == null) {
            throw new IllegalArgumentException("--expert-cache needs a model file (this one was read from memory)");
        }
        if (moe.isEmpty()) {
            throw new IllegalArgumentException("--expert-cache: " + file.path().getFileName() + " has no mixture-of-experts layers");
        }
        if (modelLayer.length != moe.size()) {
            throw new IllegalArgumentException(modelLayer.length + " layer indices for " + moe.size() + " MoE layers");
        }
        ExpertStore s;
        try {
            s = new ExpertStore(file, moe, modelLayer, backend, budget, options);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + file.path() + " for expert reads: " + e.getMessage(), e);
        }
        if (options.preload() && s.cache.length > 0 && s.freeCacheCount == s.totalExperts()) {
            try {
                s.preload();
            } catch (RuntimeException | Error e) {
                s.close();
                throw e;
            }
        }
        for (int i = 0; i < moe.size(); i++) {
            moe.get(i).streamFrom(s.layers[i]);
        }
        OPEN.add(s);
        return s;
    }

    private int totalExperts() {
        int n = 0;
        for (Layer l : layers) {
            n += l.plans.length;
        }
        return n;
    }

    /**
     * The cache holds every expert: read them all now, in file order per layer, {@value #PRELOAD_WAVE} experts in flight
     * at a time, so no step waits for a first read (the resident run's behaviour). These reads are not counted as
     * step traffic ({@link ExpertStats.Tier#preloadBytes}).
     */
    private void preload() {
        long t0 = System.nanoTime();
        long bytes0 = reader.bytesRead.get();
        long reads0 = reader.reads.get();
        long busy0 = reader.busyNanos.get();
        checkFile();
        Slot[] wave = new Slot[PRELOAD_WAVE];
        int n = 0;
        for (Layer layer : layers) {
            for (int e = 0; e < layer.plans.length; e++) {
                Slot s = cache[freeCache[--freeCacheCount]];
                fill(s, layer, e);
                wave[n++] = s;
                if (n == wave.length) {
                    preloaded(wave, n);
                    n = 0;
                }
            }
        }
        preloaded(wave, n);
        preloadNanos = System.nanoTime() - t0;
        preloadBytes = reader.bytesRead.get() - bytes0;
        reader.bytesRead.addAndGet(-preloadBytes);
        reader.reads.addAndGet(-(reader.reads.get() - reads0));
        reader.busyNanos.addAndGet(-(reader.busyNanos.get() - busy0));
        LOG.log(System.Logger.Level.INFO, String.format(java.util.Locale.ROOT,
                "expert streaming: every expert fits the cache; read %.1f MiB at open in %.2f s (%.0f MiB/s)",
                preloadBytes / 1048576.0, preloadNanos / 1e9, preloadBytes / 1048576.0 / Math.max(1e-9, preloadNanos / 1e9)));
    }

    private static final int PRELOAD_WAVE = 512;

    /** The read size {@code chunk} rounded down to a multiple of {@code align} (at least one); 0 stays 0. */
    private static int chunk(int chunk, int align) {
        return chunk == 0 ? 0 : Math.max(align, chunk / align * align);
    }

    private void preloaded(Slot[] wave, int n) {
        for (int i = 0; i < n; i++) {
            Slot s = wave[i];
            s.awaitReads();
            if (s.error != null) {
                throw failed("reading expert " + s.expert + " of layer " + modelLayer[s.layer] + " from " + reader.path()
                        + " at open failed: " + s.error.getMessage(), s.error);
            }
            s.valid = true;
            layers[s.layer].resident[s.expert] = s;
            release(s);
            wave[i] = null;
        }
    }

    /**
     * Back to the state of a store just opened, for a benchmark's cold start after its warm-up: every cached expert
     * forgotten, the heat ledger cleared, the slots free; a cache that holds every expert is read again at once (its
     * reading timed as {@link ExpertStats.Tier#preloadNanos}, not as step traffic). Telemetry counters keep counting.
     * Call between steps only (on the inference thread, no layer step open).
     */
    public void empty() {
        for (Layer l : layers) {
            if (l.needCount != 0) {
                throw new IllegalStateException("expert store emptied during a step");
            }
        }
        for (Slot s : cache) {
            s.awaitReads(); // reads ahead still landing
        }
        settlingCount = 0;
        Arrays.fill(settling, null);
        for (Layer l : layers) {
            Arrays.fill(l.resident, null);
            Arrays.fill(l.ahead, null);
            Arrays.fill(l.heat, 0f);
        }
        for (int i = 0; i < cache.length; i++) {
            Slot s = cache[i];
            s.valid = false;
            s.locked = false;
            s.lastUse = 0;
            freeCache[i] = cache.length - 1 - i;
        }
        freeCacheCount = cache.length;
        pinThreshold = Float.POSITIVE_INFINITY;
        if (preloadBytes > 0) {
            preload();
        }
    }

    /** Slot memory held (cache slots only: the budget's part). */
    public long cacheBytes() {
        return cache.length * slotBytes;
    }

    /** A snapshot of the telemetry (any thread). */
    public ExpertStats stats() {
        List<ExpertStats.LayerHits> per = new ArrayList<>(layers.length);
        for (int l = 0; l < layers.length; l++) {
            per.add(new ExpertStats.LayerHits(modelLayer[l], hits[l], misses[l]));
        }
        return new ExpertStats(
                new ExpertStats.Tier(budget, slotBytes, cache.length, staging.length, reader.direct(), preloadBytes,
                        preloadNanos),
                new ExpertStats.Traffic(tokens, steps, reader.reads.get(), reader.bytesRead.get(),
                        windows == 0 ? 0 : uniqueSum / windows, prefetched, prefetchUsed),
                new ExpertStats.Timing(readWaitNanos, computeNanos, reader.busyNanos.get(), reader.inFlight.get(),
                        Math.max(maxInFlight, reader.maxInFlight.get())),
                per, failure);
    }

    /** A snapshot of every store open in this process (normally one; one per rank when ranks share a process). */
    public static List<ExpertStats> openStats() {
        List<ExpertStats> out = new ArrayList<>();
        for (ExpertStore s : OPEN) {
            out.add(s.stats());
        }
        return out;
    }

    /** {@code null} while healthy, else why every step fails. */
    public String failure() {
        return failure;
    }

    private ExpertStreamException failed(String why, Throwable cause) {
        if (failure == null) {
            failure = why;
            LOG.log(System.Logger.Level.ERROR, "expert streaming failed: " + why);
        }
        return new ExpertStreamException(failure, cause);
    }

    /** Size and modification time as at open, or the store fails: bytes read now might not be the model's. */
    private void checkFile() {
        try {
            long size = Files.size(reader.path());
            FileTime t = Files.getLastModifiedTime(reader.path());
            if (size != fileSize || !t.equals(fileTime)) {
                throw failed("model file " + reader.path() + " changed under the engine (size " + fileSize + " -> " + size
                        + ", modified " + fileTime + " -> " + t + "); expert reads refused", null);
            }
        } catch (IOException e) {
            throw failed("model file " + reader.path() + " cannot be checked: " + e, e);
        }
    }

    // --- slots and policy

    /** A slot for a miss: a free cache slot, else an evicted one, else staging; {@code null} when all are busy. */
    private Slot take() {
        Slot v = takeCache();
        if (v != null) {
            return v;
        }
        if (freeStagingCount > 0) {
            return staging[freeStaging[--freeStagingCount]];
        }
        return null;
    }

    /** The least recently used unlocked, unpinned cache slot; {@code null} when there is none (the miss goes to staging). */
    private Slot victim() {
        Slot best = null;
        for (Slot s : cache) {
            if (s.locked || !s.valid || layers[s.layer].heat[s.expert] >= pinThreshold) {
                continue;
            }
            if (best == null || s.lastUse < best.lastUse) {
                best = s;
            }
        }
        return best;
    }

    /** The heat above which a cached expert is pinned: that of the {@code pinCount}-th hottest resident one. */
    private void repin() {
        if (pinCount == 0) {
            pinThreshold = Float.POSITIVE_INFINITY;
            return;
        }
        int n = 0;
        for (Slot s : cache) {
            if (s.valid) {
                heatScratch[n++] = layers[s.layer].heat[s.expert];
            }
        }
        if (n <= pinCount) {
            pinThreshold = Float.NEGATIVE_INFINITY;
            return;
        }
        Arrays.sort(heatScratch, 0, n);
        pinThreshold = Math.max(heatScratch[n - pinCount], Float.MIN_NORMAL);
    }

    private void release(Slot s) {
        s.locked = false;
        if (s.cache) {
            if (!s.valid) {
                freeCache[freeCacheCount++] = s.id;
            }
        } else {
            freeStaging[freeStagingCount++] = s.id;
        }
    }

    private void fill(Slot s, Layer layer, int e) {
        if (s.ffn != null) {
            backend.forget(s.ffn.gate());
            backend.forget(s.ffn.up());
            backend.forget(s.ffn.down());
        }
        ExpertPlan p = layer.plans[e];
        s.layer = layer.index;
        s.expert = e;
        s.valid = false;
        s.locked = true;
        s.lastUse = tick;
        s.error = null;
        s.ffn = p.over(s.mem);
        int runs = p.runPosition().length;
        s.pending.set(runs);
        for (int r = 0; r < runs; r++) {
            ExpertReader.Task t = s.tasks[r];
            t.position = p.runPosition()[r];
            t.offset = p.runSlot()[r];
            t.length = p.runLength()[r];
            t.need = p.runNeed()[r];
            reader.submit(t);
        }
    }

    // --- reading ahead

    /**
     * Layer {@code from}'s input {@code x} ({@code batch} rows) through layer {@code from + 1}'s router: that layer's
     * likely experts (each row's top {@code used} by router logit; the residual stream changes little from one layer to
     * the next) are read now into cache slots while layer {@code from} computes, as far as free or evictable slots
     * allow. Only where bytes come from changes: the next layer's step finds them present (or in flight) instead of
     * issuing their reads.
     */
    private void readAhead(int from, float[] x, int batch) {
        int to = from + 1;
        if (!prefetch || to >= layers.length || cache.length == 0) {
            return;
        }
        Layer next = layers[to];
        int n = next.plans.length;
        ml.juno.engine.kernel.WeightMatrix router = routers[to];
        if (router.rows() != n || (long) batch * router.cols() > x.length) {
            return;
        }
        if (aheadLogits.length < batch * n) {
            aheadLogits = new float[batch * n];
        }
        backend.matmul(router, x, aheadLogits, batch);
        Arrays.fill(aheadPicked, 0, n, false);
        int picked = 0;
        for (int b = 0; b < batch; b++) {
            int o = b * n;
            for (int k = 0; k < next.used; k++) {
                int best = -1;
                for (int e = 0; e < n; e++) {
                    float v = aheadLogits[o + e];
                    if (!(v == v)) {
                        continue;
                    }
                    if (best < 0 || v > aheadLogits[o + best]) {
                        best = e;
                    }
                }
                if (best < 0) {
                    break;
                }
                aheadLogits[o + best] = Float.NaN; // taken for this row
                if (!aheadPicked[best]) {
                    aheadPicked[best] = true;
                    picked++;
                }
            }
        }
        // first keep the likely ones already held from being evicted for the others
        for (int e = 0; e < n; e++) {
            if (aheadPicked[e] && next.resident[e] != null) {
                next.resident[e].lastUse = tick;
                aheadPicked[e] = false;
                picked--;
            } else if (aheadPicked[e] && next.ahead[e] != null) {
                aheadPicked[e] = false;
                picked--;
            }
        }
        // at most a layer's fair share of the cache, so a wide batch's guesses cannot flush the other layers' experts
        int room = Math.max(1, cache.length / layers.length);
        if (picked == 0) {
            return;
        }
        if (!fileChecked) {
            checkFile();
            fileChecked = true;
        }
        for (int e = 0; e < n && picked > 0 && room > 0; e++) {
            if (!aheadPicked[e]) {
                continue;
            }
            room--;
            Slot s = takeCache();
            if (s == null) {
                return; // every cache slot held or pinned: the rest is read when needed
            }
            fill(s, next, e);
            next.ahead[e] = s;
            prefetched++;
            picked--;
        }
    }

    /** A free or evictable cache slot (never staging: a slot read ahead must outlive the step that read it). */
    private Slot takeCache() {
        if (freeCacheCount > 0) {
            return cache[freeCache[--freeCacheCount]];
        }
        Slot v = victim();
        if (v != null) {
            if (layers[v.layer].resident[v.expert] == v) {
                layers[v.layer].resident[v.expert] = null;
            }
            v.valid = false;
        }
        return v;
    }

    /** A slot read ahead that no step holds, its reads done: findable (or free, if they failed), unlocked. */
    private void settle(Slot s) {
        Slot held = layers[s.layer].resident[s.expert];
        if (s.error == null && (held == null || held == s)) {
            s.valid = true;
            layers[s.layer].resident[s.expert] = s;
        } else {
            s.valid = false;
        }
        release(s);
    }

    /** Settles the slots read ahead whose reads have finished since. */
    private void settleDone() {
        int k = 0;
        for (int i = 0; i < settlingCount; i++) {
            Slot s = settling[i];
            if (s.pending.get() == 0) {
                settle(s);
            } else {
                settling[k++] = s;
            }
        }
        for (int i = k; i < settlingCount; i++) {
            settling[i] = null;
        }
        settlingCount = k;
    }

    // --- steps

    private void stepStart() {
        if (failure != null) {
            throw new ExpertStreamException(failure, null);
        }
        repin();
        reader.maxInFlight.set(reader.inFlight.get());
        stepHits = 0;
        stepMisses = 0;
        stepBytes = reader.bytesRead.get();
        stepWait = readWaitNanos;
        stepCompute = computeNanos;
        stepRows = 0;
        fileChecked = false;
        event = ExpertStepEvent.enabled() ? ExpertStepEvent.start() : null;
    }

    private void stepEnd() {
        steps++;
        tokens += stepRows;
        int stepMax = reader.maxInFlight.get();
        maxInFlight = Math.max(maxInFlight, stepMax);
        windowTokens += (int) stepRows;
        if (windowTokens >= WINDOW) {
            long bits = 0;
            for (long[] w : windowBits) {
                for (int i = 0; i < w.length; i++) {
                    bits += Long.bitCount(w[i]);
                    w[i] = 0;
                }
            }
            uniqueSum += (double) bits / windowBits.length;
            windows++;
            windowTokens = 0;
        }
        if (event != null) {
            event.finish((int) stepRows, (int) stepHits, (int) stepMisses, reader.bytesRead.get() - stepBytes, stepMax,
                    readWaitNanos - stepWait, computeNanos - stepCompute);
            event = null;
        }
    }

    /** One MoE layer's view of the store: what {@link MoeFfn} calls. */
    private final class Layer implements ExpertSource {
        final int index;
        final ExpertPlan[] plans;
        final int used;
        final Slot[] resident;
        /** Slots read ahead for this layer by the layer before, not yet claimed by a step of this one. */
        final Slot[] ahead;
        final float[] heat;
        /** This step's experts, ascending, and the slot each has (or {@code null}: not issued yet, or done). */
        final int[] need;
        final Slot[] assigned;
        /** Index in {@link #need} of each expert this step uses, -1 for the others. */
        final int[] position;
        /** By index in {@link #need}: done this step (its slot released). */
        final boolean[] finished;
        int needCount;
        /** Misses before this index have a slot and their reads queued. */
        int issued;
        long stepStart;
        long waitAtStart;

        Layer(int index, ExpertPlan[] plans, int used) {
            this.index = index;
            this.plans = plans;
            this.used = used;
            this.resident = new Slot[plans.length];
            this.ahead = new Slot[plans.length];
            this.heat = new float[plans.length];
            this.need = new int[plans.length];
            this.assigned = new Slot[plans.length];
            this.position = new int[plans.length];
            this.finished = new boolean[plans.length];
            Arrays.fill(position, -1);
        }

        @Override
        public void begin(int[] expertStart, int n) {
            if (index == 0) {
                stepStart();
            } else if (failure != null) {
                throw new ExpertStreamException(failure, null);
            }
            if (n != plans.length) {
                throw new IllegalArgumentException("routing over " + n + " experts, store has " + plans.length);
            }
            stepStart = System.nanoTime();
            waitAtStart = readWaitNanos;
            tick++;
            if (settlingCount > 0) {
                settleDone();
            }
            long[] bits = windowBits[index];
            int choices = 0;
            needCount = 0;
            for (int e = 0; e < n; e++) {
                int c = expertStart[e + 1] - expertStart[e];
                heat[e] = heat[e] * decay + c;
                if (c > 0) {
                    choices += c;
                    bits[e >>> 6] |= 1L << e;
                    Slot s = resident[e];
                    if (s == null && ahead[e] != null) {
                        s = ahead[e]; // read ahead (locked since): present or still arriving
                        ahead[e] = null;
                        prefetchUsed++;
                    }
                    if (s != null) {
                        s.locked = true;
                        s.lastUse = tick;
                        hits[index]++;
                        stepHits++;
                    } else {
                        misses[index]++;
                        stepMisses++;
                    }
                    assigned[needCount] = s;
                    finished[needCount] = false;
                    position[e] = needCount;
                    need[needCount++] = e;
                }
            }
            if (index == 0) {
                stepRows = choices / used;
            }
            if (prefetch) {
                for (int e = 0; e < n; e++) {
                    Slot s = ahead[e];
                    if (s != null) { // read ahead, not used: cached like any other once its reads are done
                        ahead[e] = null;
                        if (s.pending.get() == 0) {
                            settle(s);
                        } else {
                            settling[settlingCount++] = s;
                        }
                    }
                }
            }
            issued = 0;
            if (!fileChecked && hasMiss()) {
                checkFile(); // once per step that reads
                fileChecked = true;
            }
            issue();
        }

        @Override
        public void ahead(float[] x, int batch) {
            if (issued == needCount) { // this step's own misses all have their slots: the rest may be read ahead
                readAhead(index, x, batch);
            }
        }

        private boolean hasMiss() {
            for (int i = 0; i < needCount; i++) {
                if (assigned[i] == null) {
                    return true;
                }
            }
            return false;
        }

        /** Gives the next misses, in order, a slot and queues their reads, as far as slots allow. */
        private void issue() {
            while (issued < needCount) {
                if (assigned[issued] == null && !finished[issued]) {
                    Slot s = take();
                    if (s == null) {
                        return;
                    }
                    fill(s, this, need[issued]);
                    assigned[issued] = s;
                }
                issued++;
            }
        }

        /** {@code e}'s index in this step's experts, checked. */
        private int at(int e) {
            int p = e >= 0 && e < position.length ? position[e] : -1;
            if (p < 0 || finished[p]) {
                throw new IllegalStateException("expert " + e + " of MoE layer " + modelLayer[index]
                        + (p < 0 ? " was not routed this step" : " is already done this step"));
            }
            return p;
        }

        /** The slot's FFN once its reads are complete: checked, and findable from now on if it is a cache slot. */
        private GatedFfn ready(Slot s, int e) {
            Throwable err = s.error;
            if (err != null) {
                throw failed("reading expert " + e + " of layer " + modelLayer[index] + " from " + reader.path()
                        + " failed: " + err.getMessage(), err);
            }
            if (!s.valid) {
                s.valid = true;
                if (s.cache) {
                    resident[e] = s;
                }
            }
            return s.ffn;
        }

        @Override
        public GatedFfn present(int e) {
            Slot s = assigned[at(e)]; // null: a miss not issued yet
            return s != null && s.pending.get() == 0 ? ready(s, e) : null;
        }

        @Override
        public GatedFfn await(int e) {
            int p = at(e);
            if (assigned[p] == null) {
                issue();
                if (assigned[p] == null) {
                    return null;
                }
            }
            Slot s = assigned[p];
            readWaitNanos += s.awaitReads();
            return ready(s, e);
        }

        @Override
        public GatedFfn incoming(int e) {
            Slot s = assigned[at(e)]; // null: a miss not issued yet
            return s == null ? null : s.ffn;
        }

        @Override
        public boolean awaitBytes(int e) {
            Slot s = assigned[position[e]];
            teamWaitNanos.addAndGet(s.awaitReads());
            return s.error == null;
        }

        @Override
        public void done(int e) {
            int p = at(e);
            Slot s = assigned[p];
            if (s == null) {
                throw new IllegalStateException("expert " + e + " of MoE layer " + modelLayer[index] + " done before it was read");
            }
            assigned[p] = null;
            finished[p] = true;
            release(s);
            issue();
        }

        @Override
        public void end() {
            for (int i = 0; i < needCount; i++) {
                Slot s = assigned[i];
                if (s != null) {
                    s.awaitReads(); // never reuse memory a read is still writing
                    if (s.error != null && s.cache && s.valid) {
                        s.valid = false;
                    }
                    if (s.cache && !s.valid && resident[s.expert] == s) {
                        resident[s.expert] = null;
                    }
                    assigned[i] = null;
                    release(s);
                }
                position[need[i]] = -1;
            }
            needCount = 0;
            // the team's waits (while the others computed) count as their share of the team's time
            readWaitNanos += teamWaitNanos.getAndSet(0) / Math.max(1, backend.threads());
            // compute: the layer step's time not spent waiting for reads
            computeNanos += System.nanoTime() - stepStart - (readWaitNanos - waitAtStart);
            if (index == layers.length - 1) {
                stepEnd();
            }
        }
    }

    @Override
    public void close() {
        OPEN.remove(this);
        try {
            reader.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "closing expert reads: " + e);
        }
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
