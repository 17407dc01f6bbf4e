package ml.juno.engine.kernel.cpu;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kernel.cpu.CpuTypeTraits.NativeActivations;
import ml.juno.engine.kernel.cpu.CpuTypeTraits.Packing;
import ml.juno.engine.tensor.GgmlType;

/**
 * Juno's native CPU kernels ({@code gpu-ffi/src/main/c}), reached through the FFM API: the library the Maven build
 * compiled into the jar, extracted once to a cache file named by its content hash, and the variant of its kernels
 * (AVX2, AVX-VNNI, AVX-512 VNNI) that this CPU runs best. Results are bit-identical to the Java backend's
 * ({@link QuantKernel}, {@link FloatKernel}); {@code juno_cpu.h} says how.
 *
 * <p>The kernels trust their arguments, so every size is checked here before a downcall ({@link #matmul}). Activations
 * and outputs are Java arrays passed without copying ({@link Linker.Option#critical critical} downcalls with heap
 * access); weights are slices of the model's memory map.
 */
public final class NativeKernels {
    /** Where the build puts the library inside the jar. */
    static final String RESOURCE = "/ml/juno/engine/native/linux-x86_64/libjunocpu.so";
    private static final int ABI_VERSION = 7;
    private static final int FEAT_AVX2 = 1;
    private static final int FEAT_AVXVNNI = 2;
    private static final int FEAT_AVX512VNNI = 4;

    /** The variants, best first: name and the feature bit it needs. */
    private static final String[] ISAS = {"avx512vnni", "avxvnni", "avx2"};
    private static final int[] ISA_FEATURES = {FEAT_AVX512VNNI, FEAT_AVXVNNI, FEAT_AVX2};

    /** Bytes of one activation block for 32-element weight blocks ({@code juno_xq8}) and 256 ({@code juno_xqk}). */
    static final int XQ8_BYTES = 76;
    static final int XQK_BYTES = 292;

    private static volatile Loaded loaded;

    private final String isa;
    private final MethodHandle quantize;
    private final MethodHandle matmul;
    private final MethodHandle attnScores;
    private final MethodHandle attnValues;
    private final MethodHandle repack;
    /** The AMX Q4_K product ({@code juno_amx.c}), or {@code null} where the CPU, the OS or the library has none. */
    private final MethodHandle amxMatmul;
    private static final int FEAT_AMX = 8;
    /**
     * Bytes of packed Q4_K and Q5_K ({@code kernels/q4_k_x16.h}) per 16 rows and super-block: weights ({@code k16_wblk},
     * {@code k5_wblk}), activations ({@code k16_xblk}, the same for both).
     */
    private static final int K16_WEIGHT_BYTES = 2432;
    private static final int K5_WEIGHT_BYTES = 2944;
    private static final int K16_ACTIVATION_BYTES = 4672;

    /** Added to a type id: the weights as {@link #repack} arranged them ({@code JUNO_PACKED}). */
    private static final int PACKED = 256;
    /** Rows per group of packed weights ({@code kernels/q4_0_x16.c}, {@code kernels/q4_k_x16.h}). */
    static final int PACK_ROWS = 16;

    private NativeKernels(String isa, MethodHandle quantize, MethodHandle matmul, MethodHandle attnScores,
                          MethodHandle attnValues, MethodHandle repack, MethodHandle amxMatmul) {
        this.isa = isa;
        this.repack = repack;
        this.amxMatmul = amxMatmul;
        this.quantize = quantize;
        this.matmul = matmul;
        this.attnScores = attnScores;
        this.attnValues = attnValues;
    }

    /** The outcome of loading: the kernels, or why there are none. */
    public record Loaded(NativeKernels kernels, String problem, int features) {
        public boolean ok() {
            return kernels != null;
        }
    }

    /**
     * The best variant for this CPU, or the one named by {@code -Djuno.native.isa} (avx2, avxvnni, avx512vnni); loaded
     * once per JVM. Never throws: a missing library, another platform or an old CPU give {@link Loaded#problem()}.
     */
    public static Loaded load() {
        Loaded l = loaded;
        if (l == null) {
            synchronized (NativeKernels.class) {
                l = loaded;
                if (l == null) {
                    l = doLoad(System.getProperty("juno.native.isa", ""));
                    loaded = l;
                }
            }
        }
        return l;
    }

    /** A given variant ({@code avx2}, {@code avxvnni}, {@code avx512vnni}) if this CPU runs it: for tests and reports. */
    public static Loaded variant(String isa) {
        return doLoad(isa);
    }

    /** The ISA variants this CPU can run and the library has, best first (empty without the library). */
    public static java.util.List<String> runnableVariants() {
        Loaded l = load();
        java.util.List<String> out = new java.util.ArrayList<>();
        if (l.ok()) {
            for (int i = 0; i < ISAS.length; i++) {
                if ((l.features() & ISA_FEATURES[i]) != 0 && variant(ISAS[i]).ok()) {
                    out.add(ISAS[i]);
                }
            }
        }
        return out;
    }

    private static Loaded doLoad(String wanted) {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return new Loaded(null, "no native kernels for " + os + "/" + arch, 0);
        }
        Path lib;
        try {
            lib = extract();
        } catch (IOException e) {
            return new Loaded(null, "cannot extract the native library: " + e.getMessage(), 0);
        }
        if (lib == null) {
            return new Loaded(null, "the native library was not built (no C compiler when Juno was built?)", 0);
        }
        try {
            SymbolLookup syms = SymbolLookup.libraryLookup(lib, Arena.global());
            Linker linker = Linker.nativeLinker();
            MethodHandle version = linker.downcallHandle(syms.findOrThrow("juno_abi_version"), FunctionDescriptor.of(ValueLayout.JAVA_INT));
            int v = (int) version.invokeExact();
            if (v != ABI_VERSION) {
                return new Loaded(null, "native library ABI " + v + ", expected " + ABI_VERSION, 0);
            }
            MethodHandle feats = linker.downcallHandle(syms.findOrThrow("juno_cpu_features"), FunctionDescriptor.of(ValueLayout.JAVA_INT));
            int features = (int) feats.invokeExact();
            String isa = null;
            for (int i = 0; i < ISAS.length; i++) {
                // a variant the compiler could not build is simply absent from the library
                boolean built = syms.find("juno_" + ISAS[i] + "_matmul").isPresent();
                if (built && (features & ISA_FEATURES[i]) != 0 && (wanted.isEmpty() || wanted.equals(ISAS[i]))) {
                    isa = ISAS[i];
                    break;
                }
            }
            if (isa == null) {
                return new Loaded(null, wanted.isEmpty() ? "this CPU lacks AVX2/FMA/F16C, which the native kernels need"
                        : "this CPU cannot run the native variant " + wanted, features);
            }
            Linker.Option critical = Linker.Option.critical(true);
            ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
            MethodHandle q = linker.downcallHandle(syms.findOrThrow("juno_" + isa + "_quantize_rows"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, j, j, ValueLayout.ADDRESS, j, j),
                    critical);
            MethodHandle m = linker.downcallHandle(syms.findOrThrow("juno_" + isa + "_matmul"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, j, j,
                            ValueLayout.ADDRESS, j, ValueLayout.ADDRESS, j, j, j),
                    critical);
            ValueLayout.OfFloat f = ValueLayout.JAVA_FLOAT;
            MethodHandle as = linker.downcallHandle(syms.findOrThrow("juno_" + isa + "_attn_scores_f16"),
                    FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.ADDRESS, j, j, j, ValueLayout.ADDRESS, j, j, j, j, f,
                            ValueLayout.ADDRESS, j),
                    critical);
            MethodHandle av = linker.downcallHandle(syms.findOrThrow("juno_" + isa + "_attn_values_f16"),
                    FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.ADDRESS, j, j, j, ValueLayout.ADDRESS, j,
                            ValueLayout.ADDRESS, j, ValueLayout.ADDRESS, j, j, j),
                    critical);
            MethodHandle rp = linker.downcallHandle(syms.findOrThrow("juno_" + isa + "_repack"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, j, j, j,
                            ValueLayout.ADDRESS));
            return new Loaded(new NativeKernels(isa, q, m, as, av, rp, bindAmx(syms, linker, isa, features)), null, features);
        } catch (Throwable e) {
            return new Loaded(null, "cannot load the native library " + lib + ": " + e, 0);
        }
    }

    /**
     * The AMX product where the AVX-512 variant runs, the CPU has AMX-INT8 with the OS's tile state, the library has
     * it and Linux grants this process the tile registers ({@code juno_amx_enable}); {@code -Djuno.native.amx=false}
     * turns it off (packed Q4_K then runs on AVX-512 vectors: the same bits). {@code null} otherwise.
     */
    private static MethodHandle bindAmx(SymbolLookup syms, Linker linker, String isa, int features) throws Throwable {
        if (!isa.equals("avx512vnni") || (features & FEAT_AMX) == 0 || "false".equals(System.getProperty("juno.native.amx"))
                || syms.find("juno_amx_matmul_q4_k").isEmpty()) {
            return null;
        }
        MethodHandle enable = linker.downcallHandle(syms.findOrThrow("juno_amx_enable"), FunctionDescriptor.of(ValueLayout.JAVA_INT));
        if ((int) enable.invokeExact() != 0) {
            return null;
        }
        ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
        return linker.downcallHandle(syms.findOrThrow("juno_amx_matmul_q4_k"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, j, ValueLayout.ADDRESS, j, ValueLayout.ADDRESS, j, j, j),
                Linker.Option.critical(true));
    }

    private static Packing packing(GgmlType type) {
        return CpuTypeTraits.of(type).nativeKernel().packing();
    }

    /** Whether this is the AVX-512 variant, the one with packed Q8_0 and K-quants ({@code kernels/q8_0_x16.h}, {@code q4_k_x16.h}, {@code q6_k_x16.h}). */
    private boolean avx512() {
        return isa.equals("avx512vnni");
    }

    /** Whether {@code type}'s packed form exists in this variant. */
    private boolean hasPacked(GgmlType type) {
        return switch (packing(type)) {
            case LANES -> true;
            case LANES_AVX512, K_GROUPS, K5_GROUPS, Q6_GROUPS -> avx512();
            case NONE -> false;
        };
    }

    /** Whether Q4_K products run on AMX tiles (after {@link #repack}). */
    public boolean amx() {
        return amxMatmul != null;
    }

    /**
     * The library from the class path, copied once to {@code <cache>/juno/native/<sha256>/libjunocpu.so}; or the file
     * named by {@code -Djuno.native.library}.
     */
    private static Path extract() throws IOException {
        String explicit = System.getProperty("juno.native.library");
        if (explicit != null && !explicit.isBlank()) { // a library built elsewhere (the sanitizer test's)
            return Path.of(explicit);
        }
        byte[] bytes;
        try (InputStream in = NativeKernels.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                return null;
            }
            bytes = in.readAllBytes();
        }
        String hash;
        try {
            hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 32);
        } catch (NoSuchAlgorithmException e) {
            throw new IOException(e);
        }
        Path dir = cacheRoot().resolve("juno").resolve("native").resolve(hash);
        Path lib = dir.resolve("libjunocpu.so");
        if (Files.isRegularFile(lib) && Files.size(lib) == bytes.length) {
            return lib;
        }
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "libjunocpu", ".tmp");
        try {
            Files.write(tmp, bytes);
            try {
                Files.move(tmp, lib, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, lib, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return lib;
    }

    private static Path cacheRoot() {
        String explicit = System.getProperty("juno.native.cache", System.getenv("JUNO_NATIVE_CACHE"));
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg);
        }
        String home = System.getProperty("user.home");
        Path h = home != null ? Path.of(home, ".cache") : null;
        if (h != null && (Files.isWritable(h) || (!Files.exists(h) && Files.isWritable(h.getParent())))) {
            return h;
        }
        return Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** The variant in use: {@code avx2}, {@code avxvnni} or {@code avx512vnni}. */
    public String isa() {
        return isa;
    }

    /** Whether {@link #matmul} takes weights of {@code type} with rows of {@code cols} elements. */
    public static boolean supports(GgmlType type, int cols) {
        if (!CpuTypeTraits.supports(type)) {
            return false;
        }
        NativeActivations a = CpuTypeTraits.of(type).nativeKernel().activations();
        return a == NativeActivations.FLOATS || a == NativeActivations.HALVES
                ? cols % 16 == 0 // FloatKernel.dot's 16-lane order; other lengths stay in Java
                : cols % type.blockSize == 0;
    }

    /** Bytes {@link #quantize} writes for {@code rows} activation rows of {@code cols} for weights of {@code type}. */
    public static long activationBytes(GgmlType type, int rows, int cols) {
        long n = (long) rows * cols;
        if (!CpuTypeTraits.supports(type)) {
            throw new IllegalArgumentException("no native kernel for " + type);
        }
        return switch (CpuTypeTraits.of(type).nativeKernel().activations()) {
            case XQ8 -> n / 32 * XQ8_BYTES;
            case XQK -> n / 256 * XQK_BYTES;
            // then the sums of 32 and the scales by activation row (juno_cpu.c sums_by_row), rows rounded up to 16
            case XQK_SUMS -> n / 256 * XQK_BYTES + (long) cols / 256 * 9 * ((rows + 15) / 16 * 16) * Float.BYTES;
            case FLOATS -> n * Float.BYTES;
            case HALVES -> n * 2;
        };
    }

    /**
     * As {@link #activationBytes(GgmlType, int, int)}, for weights {@link #repack repacked} when {@code packed}:
     * packed Q4_K and Q5_K take their activations in groups of 16 rows.
     */
    public long activationBytes(GgmlType type, boolean packed, int rows, int cols) {
        if (packed && packing(type).activationGroups()) {
            return (rows + PACK_ROWS - 1L) / PACK_ROWS * (cols / type.blockSize) * K16_ACTIVATION_BYTES;
        }
        return activationBytes(type, rows, cols);
    }

    /** As {@link #quantize(GgmlType, boolean, MemorySegment, int, int, MemorySegment)} for weights as stored. */
    public void quantize(GgmlType type, MemorySegment x, int rows, int cols, MemorySegment xq) {
        quantize(type, false, x, rows, cols, xq);
    }

    /**
     * Quantizes (or rounds) activation rows {@code [0, rows)} of {@code x} (a heap segment of {@code [rows][cols]}
     * floats) for weights of {@code type} into {@code xq}, the layout {@link #matmul} reads for a batch of {@code rows}.
     */
    public void quantize(GgmlType type, boolean packed, MemorySegment x, int rows, int cols, MemorySegment xq) {
        quantizeRows(type, packed, x, rows, cols, xq, 0, rows);
    }

    /**
     * As {@link #quantize(GgmlType, boolean, MemorySegment, int, int, MemorySegment)} for rows {@code [r0, r1)} of the
     * batch of {@code rows} only: they go where, and as, quantizing the whole batch puts them, so ranges quantized on
     * several threads give the same bytes.
     */
    public void quantizeRows(GgmlType type, boolean packed, MemorySegment x, int rows, int cols, MemorySegment xq, int r0, int r1) {
        if (!supports(type, cols) || rows < 0 || (long) rows * cols * Float.BYTES > x.byteSize()) {
            throw new IllegalArgumentException("bad activations: " + type + ", " + rows + " rows of " + cols + " in "
                    + x.byteSize() / Float.BYTES + " floats");
        }
        if (r0 < 0 || r1 < r0 || r1 > rows) {
            throw new IllegalArgumentException("rows " + r0 + ".." + r1 + " outside a batch of " + rows);
        }
        if (packed && !hasPacked(type)) {
            throw new IllegalArgumentException("no packed " + type + " in the " + isa + " kernels");
        }
        long need = activationBytes(type, packed, rows, cols);
        if (need > xq.byteSize()) {
            throw new IllegalArgumentException("activation buffer of " + xq.byteSize() + " bytes < " + need);
        }
        if (rows == 0) {
            return;
        }
        int rc;
        try {
            int id = CpuTypeTraits.of(type).nativeKernel().id() | (packed ? PACKED : 0);
            rc = (int) quantize.invokeExact(id, x, (long) rows, (long) cols, xq, (long) r0, (long) r1);
        } catch (Throwable t) {
            throw new IllegalStateException("native quantize failed", t);
        }
        if (rc != 0) {
            throw new IllegalStateException("native quantize refused " + type + " (" + rc + ")");
        }
    }

    /**
     * Checks that every position {@code from..to} of {@code off} (a segment of longs) has {@code dim + n} F16 elements
     * inside {@code seg}.
     */
    private static void checkPositions(MemorySegment seg, MemorySegment off, int from, int to, int dim, int n) {
        long count = off.byteSize() / Long.BYTES;
        if (from < 0 || to < from || to >= count || dim < 0 || n <= 0) {
            throw new IllegalArgumentException("bad positions " + from + ".." + to + " of " + count);
        }
        long limit = seg.byteSize() / 2 - dim - n;
        for (int t = from; t <= to; t++) {
            long e = off.getAtIndex(ValueLayout.JAVA_LONG, t);
            if (e < 0 || e > limit) {
                throw new IllegalArgumentException("position " + t + " at element " + e + " outside the cache");
            }
        }
    }

    private static void checkFloats(MemorySegment a, long from, long count, String what) {
        if (from < 0 || (from + count) * Float.BYTES > a.byteSize()) {
            throw new IllegalArgumentException(what + " buffer too small");
        }
    }

    /**
     * The scores of {@code heads} query heads that share one KV head: for head {@code h < heads}, {@code s[h·sStride + t]
     * = (q_h·K_t) · scale} for {@code from <= t <= to}, the query {@code q_h} floats {@code [qOff + h·qStride, … + n)} of
     * {@code q}; each bit-identical to {@code KvCache.dotKey(..) * scale}. The heads share each key's load and
     * conversion, which is what makes a group faster than its heads one at a time.
     */
    public void attentionScores(MemorySegment keys, MemorySegment off, int from, int to, int dim, MemorySegment q, int qOff,
                                int qStride, int heads, int n, float scale, MemorySegment s, int sStride) {
        checkHeads(heads, qStride, n, sStride, to);
        checkPositions(keys, off, from, to, dim, n);
        checkFloats(q, qOff, (long) (heads - 1) * qStride + n, "query");
        checkFloats(s, 0, (long) (heads - 1) * sStride + to + 1L, "score");
        try {
            attnScores.invokeExact(keys, off, (long) from, (long) to, (long) dim, q, (long) qOff, (long) qStride, (long) heads,
                    (long) n, scale, s, (long) sStride);
        } catch (Throwable t) {
            throw new IllegalStateException("native attention failed", t);
        }
    }

    /**
     * The weighted values of {@code heads} query heads that share one KV head: for head {@code h < heads},
     * {@code out[outOff + h·outStride + i] = Σ_t (s[h·sStride + t]·inv[h])·V_t[i]} in position order, each bit-identical
     * to zeroing then {@code KvCache.addValue} per position; {@code s} is left holding the weights. The heads share
     * each value's load and conversion.
     */
    public void attentionValues(MemorySegment values, MemorySegment off, int from, int to, int dim, MemorySegment s,
                                int sStride, MemorySegment inv, int heads, MemorySegment out, int outOff, int outStride, int n) {
        checkHeads(heads, outStride, n, sStride, to);
        checkPositions(values, off, from, to, dim, n);
        checkFloats(out, outOff, (long) (heads - 1) * outStride + n, "output");
        checkFloats(s, 0, (long) (heads - 1) * sStride + to + 1L, "score");
        checkFloats(inv, 0, heads, "inverse sum");
        try {
            attnValues.invokeExact(values, off, (long) from, (long) to, (long) dim, s, (long) sStride, inv, (long) heads, out,
                    (long) outOff, (long) outStride, (long) n);
        } catch (Throwable t) {
            throw new IllegalStateException("native attention failed", t);
        }
    }

    /** A head group's strides: at least one head; each head's floats apart from the next one's. */
    private static void checkHeads(int heads, int stride, int n, int sStride, int to) {
        if (heads < 1 || (heads > 1 && (stride < n || sStride < to + 1))) {
            throw new IllegalArgumentException("bad head group: " + heads + " heads, strides " + stride + " and " + sStride
                    + " for " + n + " elements and " + (to + 1) + " scores");
        }
    }

    /**
     * Bytes {@link #repack} writes for {@code w}, or {@code -1} when its type has no packed form here. Both are groups
     * of 16 rows whose blocks' integer dots are summed whole before one float multiply-add per block, as llama.cpp's
     * repacked and AMX kernels do, so their results are within rounding of the plain kernels', not bit-identical: Q4_0
     * with one row per vector lane ({@code kernels/q4_0_x16.c}, every variant); in the AVX-512 variant, Q8_0 likewise
     * ({@code kernels/q8_0_x16.h}), Q4_K ({@code kernels/q4_k_x16.h}: on AMX tiles where {@link #amx}, else on
     * vectors, the same bits either way), Q5_K (the same form with the fifth bits, on vectors) and Q6_K ({@code
     * kernels/q6_k_x16.h}, which keeps ggml's eight lanes per block and so the plain kernels' bits).
     */
    public long packedBytes(WeightMatrix w) {
        if (!supports(w.type(), w.cols()) || !hasPacked(w.type())) {
            return -1;
        }
        long groups = (w.rows() + PACK_ROWS - 1L) / PACK_ROWS;
        long blocks = w.cols() / w.type().blockSize;
        return groups * blocks * switch (packing(w.type())) {
            case K_GROUPS -> K16_WEIGHT_BYTES;
            case K5_GROUPS -> K5_WEIGHT_BYTES;
            default -> PACK_ROWS * w.type().typeSize; // the others (packed Q6_K's q6_wblk too) are the 16 rows' blocks
        };
    }

    /** {@code w} rearranged for {@link #matmul(WeightMatrix, MemorySegment, MemorySegment, int, MemorySegment, int, int)}, in {@code arena}. */
    public MemorySegment repack(WeightMatrix w, Arena arena) {
        long bytes = packedBytes(w);
        if (bytes < 0) {
            throw new IllegalArgumentException("no packed form of " + w.type());
        }
        MemorySegment dst = arena.allocate(bytes, 64);
        repackInto(w, dst);
        return dst;
    }

    /**
     * {@code w} rearranged as {@link #repack} does, into {@code dst} (at least {@link #packedBytes} bytes, 64-byte
     * aligned): how a packed copy's memory is reused for other weights of the same shape (streamed experts).
     */
    public void repackInto(WeightMatrix w, MemorySegment dst) {
        long bytes = packedBytes(w);
        if (bytes < 0) {
            throw new IllegalArgumentException("no packed form of " + w.type());
        }
        if (dst.byteSize() < bytes || dst.address() % 64 != 0) {
            throw new IllegalArgumentException(w.name() + ": packed destination of " + dst.byteSize() + " bytes at "
                    + dst.address() + " cannot take " + bytes + " 64-byte aligned bytes");
        }
        MemorySegment data = w.data();
        if ((w.rows() - 1L) * w.rowStride() + w.rowBytes() > data.byteSize()) {
            throw new IllegalArgumentException(w.name() + ": weight segment of " + data.byteSize() + " bytes too small");
        }
        int rc;
        try {
            rc = (int) repack.invokeExact(w.type().id, data, w.rowStride(), (long) w.rows(), (long) w.cols(), dst);
        } catch (Throwable t) {
            throw new IllegalStateException("native repack failed", t);
        }
        if (rc != 0) {
            throw new IllegalStateException("native repack refused " + w.type() + " (" + rc + ")");
        }
    }

    /**
     * {@code out[b·rows + r] = W[r]·x[b]} for weight rows {@code [r0, r1)} and activation rows {@code b < batch}, with
     * {@code xq} from {@link #quantize} of the whole batch.
     */
    public void matmul(WeightMatrix w, MemorySegment xq, int batch, MemorySegment out, int r0, int r1) {
        matmul(w, null, xq, batch, out, r0, r1);
    }

    /**
     * As {@link #matmul(WeightMatrix, MemorySegment, int, MemorySegment, int, int)}, from {@code packed} (what
     * {@link #repack} made of {@code w}; then {@code r0} is a multiple of 16) when it is not {@code null}.
     */
    public void matmul(WeightMatrix w, MemorySegment packed, MemorySegment xq, int batch, MemorySegment out, int r0, int r1) {
        GgmlType type = w.type();
        int cols = w.cols();
        int rows = w.rows();
        if (!supports(type, cols)) {
            throw new IllegalArgumentException("no native kernel for " + type + " rows of " + cols);
        }
        if (batch <= 0 || r0 < 0 || r1 > rows || r0 > r1) {
            throw new IllegalArgumentException("bad range: rows " + r0 + ".." + r1 + " of " + rows + ", batch " + batch);
        }
        if ((long) batch * rows * Float.BYTES > out.byteSize()) {
            throw new IllegalArgumentException("output of " + out.byteSize() / Float.BYTES + " floats < " + batch + "x" + rows);
        }
        if (activationBytes(type, packed != null, batch, cols) > xq.byteSize()) {
            throw new IllegalArgumentException("activations of " + xq.byteSize() + " bytes < " + batch + " rows of " + cols);
        }
        MemorySegment data = w.data();
        if ((rows - 1L) * w.rowStride() + w.rowBytes() > data.byteSize()) {
            throw new IllegalArgumentException(w.name() + ": weight segment of " + data.byteSize() + " bytes too small");
        }
        int id = CpuTypeTraits.of(type).nativeKernel().id();
        if (packed != null) {
            long need = packedBytes(w);
            if (need < 0 || packed.byteSize() < need || r0 % PACK_ROWS != 0) {
                throw new IllegalArgumentException(w.name() + ": packed weights of " + packed.byteSize() + " bytes (need "
                        + need + ") or first row " + r0 + " not a multiple of " + PACK_ROWS);
            }
            data = packed;
            id |= PACKED;
        }
        if (r0 == r1) {
            return;
        }
        int rc;
        try {
            rc = packed != null && packing(type) == Packing.K_GROUPS && amx()
                    ? (int) amxMatmul.invokeExact(data, (long) cols, xq, (long) batch, out, (long) rows, (long) r0, (long) r1)
                    : (int) matmul.invokeExact(id, data, w.rowStride(), (long) cols, xq, (long) batch,
                            out, (long) rows, (long) r0, (long) r1);
        } catch (Throwable t) {
            throw new IllegalStateException("native matmul failed", t);
        }
        if (rc != 0) {
            throw new IllegalStateException("native matmul refused " + type + " (" + rc + ")");
        }
    }
}
