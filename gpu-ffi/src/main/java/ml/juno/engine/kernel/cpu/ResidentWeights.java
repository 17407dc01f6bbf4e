package ml.juno.engine.kernel.cpu;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.Locale;
import ml.juno.engine.kernel.HugeMemory;
import ml.juno.engine.kernel.WeightMatrix;

/**
 * Where a CPU backend keeps the weights it streams: copies of memory-mapped matrices in transparent huge pages, made at
 * load ({@link CpuBackend#prepare}) or at a matrix's first product, and kept until {@link #close}, and the memory of the native kernels' packed copies. A
 * decode step reads every weight once; from the file's mapping that is a page-table walk and a restart of the hardware
 * prefetcher every 4 KiB, from 2 MiB pages hardly ever (on a 2-core Zen 4 VM, TinyLlama Q4_K_M generation on two
 * threads went from 41-44 to 47-53 tokens a second).
 *
 * <p>Copies are made only where they pay and fit: on Linux with transparent huge pages allowed ({@link
 * HugeMemory#available}; anonymous 4 KiB pages read slower than the page cache's mapping), for matrices whose data is a
 * file mapping (a tensor-parallel column slice is already a copy, in huge pages too, see {@code GgufFile}), and while
 * the copies stay within what the machine, or the process's cgroup, has available ({@link #availableBytes}) less a
 * reserve; past that, matrices are read from the mapping as before, and one line says so. The routed experts of a
 * mixture-of-experts model never come here (their products ask for the weights as stored), so models larger than
 * memory still stream them. {@code JUNO_RESIDENT_WEIGHTS=0} (or {@code -Djuno.weights.resident=false}) keeps every
 * matrix in the mapping. A copy holds the same bytes, so results do not change.
 *
 * <p>Used by the backend's calling thread only (as its packed copies are).
 */
final class ResidentWeights implements AutoCloseable {
    static final String PROPERTY = "juno.weights.resident";
    static final String ENV = "JUNO_RESIDENT_WEIGHTS";
    /** Huge-page regions are reserved in steps of this much address space (only what is touched takes memory). */
    private static final long REGION = 256L << 20;
    private static final System.Logger LOG = System.getLogger("ml.juno.engine.backend");

    /** Memory for the copies: huge pages where they are available ({@link HugeMemory}), else ordinary pages. */
    private final HugeMemory.Regions regions = new HugeMemory.Regions(REGION);
    /** Whether mapped matrices are copied (packed copies are made in any case). */
    private final boolean copy;
    private final IdentityHashMap<WeightMatrix, WeightMatrix> copies = new IdentityHashMap<>();
    /** Bytes still to be copied before the budget is spent; -1 until the first copy measures it. */
    private long left = -1;
    private long copied;
    /** Whether a matrix stayed in the mapping for want of memory. */
    private boolean full;

    /** {@code copy}: whether mapped matrices are copied ({@link #forThisMachine} decides where they are). */
    ResidentWeights(boolean copy) {
        this(copy, -1);
    }

    /** {@code budget}: bytes that may be copied, or -1 to measure it at the first copy ({@link #budget}). */
    ResidentWeights(boolean copy, long budget) {
        this.copy = copy;
        this.left = budget;
    }

    /** Copies where huge pages are available (4 KiB copies would read slower than the mapping) unless switched off. */
    static ResidentWeights forThisMachine() {
        return new ResidentWeights(HugeMemory.available() && !switchedOff());
    }

    static boolean switchedOff() {
        String v = System.getProperty(PROPERTY);
        if (v == null) {
            v = System.getenv(ENV);
        }
        if (v == null) {
            return false;
        }
        String s = v.trim().toLowerCase(Locale.ROOT);
        return s.equals("0") || s.equals("false") || s.equals("off") || s.equals("no");
    }

    /**
     * {@code w} itself, or its copy in huge pages: made now if {@code w} is memory-mapped, not yet copied, and fits
     * the budget.
     */
    WeightMatrix of(WeightMatrix w) {
        if (!copy || !w.data().isMapped()) {
            return w;
        }
        WeightMatrix r = copies.get(w);
        if (r != null) {
            return r;
        }
        long bytes = w.byteSize();
        if (left < 0) {
            left = Math.max(0, budget(availableBytes()));
        }
        if (bytes > left) {
            copies.put(w, w); // stays in the mapping; not asked again
            full = true;
            return w;
        }
        left -= bytes;
        copied += bytes;
        r = w.copyInto(regions.allocate(bytes));
        copies.put(w, r);
        return r;
    }

    /** One line for a model's load: what {@link #of} copied of its matrices ({@code bytes}, in {@code nanos}), what it could not. */
    void loaded(long bytes, long nanos) {
        if (bytes > 0 || full) {
            LOG.log(System.Logger.Level.INFO, String.format(Locale.ROOT, "Juno weights: %.1f MiB copied into transparent huge pages in %.2f s%s",
                    bytes / 1048576.0, nanos / 1e9, full ? "; the rest read from the memory-mapped file: too little memory left for more"
                            : " (" + ENV + "=0: read from the memory-mapped file)"));
        }
    }

    /** Memory for a packed copy of {@code bytes}, 64-byte aligned, in huge pages where they are available. */
    MemorySegment packedMemory(long bytes) {
        return regions.allocate(bytes);
    }

    /** {@code w}'s memory will be reused for other weights: its copy (if any) is no longer looked up. */
    void forget(WeightMatrix w) {
        copies.remove(w);
    }

    /** Bytes of weights copied so far. */
    long copiedBytes() {
        return copied;
    }

    /** What copies may take of {@code available} bytes: all but a reserve of a tenth, at least 512 MiB. */
    static long budget(long available) {
        return available - Math.max(512L << 20, available / 10);
    }

    /**
     * Memory this process may still take: {@code MemAvailable}, or less where its cgroup (v2) has a limit
     * ({@code memory.max - memory.current}); {@code Long.MAX_VALUE / 2} where neither can be read.
     */
    static long availableBytes() {
        long avail = Long.MAX_VALUE / 2;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    avail = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: no copies are made there anyway
        }
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
                if (line.startsWith("0::")) {
                    Path dir = Path.of("/sys/fs/cgroup" + line.substring(3));
                    for (Path d = dir; d != null && d.startsWith("/sys/fs/cgroup"); d = d.getParent()) {
                        avail = Math.min(avail, cgroupRoom(d));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // no cgroup v2: MemAvailable alone
        }
        return avail;
    }

    /** {@code memory.max - memory.current} of cgroup folder {@code d}; unlimited where it has no limit (or no such files). */
    private static long cgroupRoom(Path d) {
        try {
            String max = Files.readString(d.resolve("memory.max")).trim();
            if (max.equals("max")) {
                return Long.MAX_VALUE;
            }
            long current = Long.parseLong(Files.readString(d.resolve("memory.current")).trim());
            return Math.max(0, Long.parseLong(max) - current);
        } catch (IOException | RuntimeException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Frees the copies: the matrices handed out by {@link #of} and {@link #packedMemory} are invalid after it. */
    @Override
    public void close() {
        copies.clear();
        regions.close();
    }
}
