package ml.juno.engine.gguf;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import ml.juno.engine.tensor.GgmlType;

/**
 * Builds a GGUF file (GGUF spec v3, or v2): metadata in insertion order, the tensor table with offsets computed
 * from the alignment, then the tensor data, each tensor padded to the alignment. {@link #write} writes to a temporary
 * file in the target's directory and renames it into place, so readers never see a half-written file.
 *
 * <pre>{@code
 * new GgufWriter()
 *     .putString(GgufKeys.GENERAL_ARCHITECTURE, "llama")
 *     .putUInt32(GgufKeys.arch("llama", GgufKeys.BLOCK_COUNT), 2)
 *     .addTensor("token_embd.weight", GgmlType.F32, new long[] {64, 512}, segment)
 *     .write(path);
 * }</pre>
 */
public final class GgufWriter {

    /** Fills a tensor's bytes: {@code dst} is exactly {@code type.byteSize(elements)} bytes of the output file. */
    @FunctionalInterface
    public interface TensorSource {
        void writeTo(MemorySegment dst) throws IOException;
    }

    private record PendingTensor(String name, GgmlType type, long[] shape, long byteSize, TensorSource source) {}

    private final LinkedHashMap<String, GgufValue> metadata = new LinkedHashMap<>();
    private final List<PendingTensor> tensors = new ArrayList<>();
    private final Set<String> tensorNames = new HashSet<>();
    private int version = 3;

    /** GGUF version to write: 3 (default) or 2 (same layout). */
    public GgufWriter version(int v) {
        if (v != 2 && v != 3) {
            throw new IllegalArgumentException("can write GGUF version 2 or 3, not " + v);
        }
        this.version = v;
        return this;
    }

    /** Sets {@code general.alignment} (a power of two); the default without it is 32. */
    public GgufWriter alignment(int alignment) {
        if (alignment <= 0 || Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment " + alignment + " is not a power of two");
        }
        metadata.put(GgufKeys.GENERAL_ALIGNMENT, new GgufValue(GgufValueType.UINT32, alignment));
        return this;
    }

    // --- metadata

    /**
     * Adds (or replaces) a value of any type, in the Java form {@link GgufMetadata#getRaw} returns: Byte for
     * UINT8/INT8, Short for UINT16/INT16, Integer for UINT32/INT32, Long for UINT64/INT64, Float, Double, Boolean,
     * String, or {@link GgufArray}.
     */
    public GgufWriter put(String key, GgufValueType type, Object value) {
        Objects.requireNonNull(key, "key");
        GgufValue v = new GgufValue(type, value);
        if (key.equals(GgufKeys.GENERAL_ALIGNMENT)) {
            long a = v.type() == GgufValueType.UINT32 ? v.asLong(key) : -1;
            if (a <= 0 || Long.bitCount(a) != 1) {
                throw new IllegalArgumentException(key + " must be a UINT32 power of two, got " + type + " " + value);
            }
        }
        metadata.put(key, v);
        return this;
    }

    public GgufWriter putString(String key, String value) {
        return put(key, GgufValueType.STRING, value);
    }

    public GgufWriter putBool(String key, boolean value) {
        return put(key, GgufValueType.BOOL, value);
    }

    public GgufWriter putUInt8(String key, int value) {
        return put(key, GgufValueType.UINT8, (byte) checkRange(key, value, 0, 0xFF));
    }

    public GgufWriter putInt8(String key, int value) {
        return put(key, GgufValueType.INT8, (byte) checkRange(key, value, Byte.MIN_VALUE, Byte.MAX_VALUE));
    }

    public GgufWriter putUInt16(String key, int value) {
        return put(key, GgufValueType.UINT16, (short) checkRange(key, value, 0, 0xFFFF));
    }

    public GgufWriter putInt16(String key, int value) {
        return put(key, GgufValueType.INT16, (short) checkRange(key, value, Short.MIN_VALUE, Short.MAX_VALUE));
    }

    public GgufWriter putUInt32(String key, long value) {
        return put(key, GgufValueType.UINT32, (int) checkRange(key, value, 0, 0xFFFF_FFFFL));
    }

    public GgufWriter putInt32(String key, int value) {
        return put(key, GgufValueType.INT32, value);
    }

    /** Writes the bit pattern of {@code value} (a negative long stands for a value above 2^63). */
    public GgufWriter putUInt64(String key, long value) {
        return put(key, GgufValueType.UINT64, value);
    }

    public GgufWriter putInt64(String key, long value) {
        return put(key, GgufValueType.INT64, value);
    }

    public GgufWriter putFloat32(String key, float value) {
        return put(key, GgufValueType.FLOAT32, value);
    }

    public GgufWriter putFloat64(String key, double value) {
        return put(key, GgufValueType.FLOAT64, value);
    }

    public GgufWriter putArray(String key, GgufArray array) {
        return put(key, GgufValueType.ARRAY, array);
    }

    public GgufWriter putStrings(String key, List<String> values) {
        return putArray(key, GgufArray.ofStrings(values));
    }

    public GgufWriter putInts(String key, int[] values) {
        return putArray(key, GgufArray.ofInts(values));
    }

    public GgufWriter putFloats(String key, float[] values) {
        return putArray(key, GgufArray.ofFloats(values));
    }

    /** Copies every key of {@code source}, in its order and with its types. */
    public GgufWriter putAll(GgufMetadata source) {
        for (Map.Entry<String, GgufValue> e : source.entries()) {
            put(e.getKey(), e.getValue().type(), e.getValue().value());
        }
        return this;
    }

    public GgufWriter remove(String key) {
        metadata.remove(key);
        return this;
    }

    private static long checkRange(String key, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("key " + key + ": " + v + " is outside [" + min + ", " + max + "]");
        }
        return v;
    }

    // --- tensors

    /** Adds a tensor whose bytes are copied from {@code data} (exactly the tensor's byte size). */
    public GgufWriter addTensor(String name, GgmlType type, long[] shape, MemorySegment data) {
        Objects.requireNonNull(data, "data");
        long bytes = check(name, type, shape);
        if (data.byteSize() != bytes) {
            throw new IllegalArgumentException(name + ": data is " + data.byteSize() + " bytes, " + type + " "
                    + java.util.Arrays.toString(shape) + " needs " + bytes);
        }
        return add(new PendingTensor(name, type, shape.clone(), bytes, dst -> MemorySegment.copy(data, 0, dst, 0, bytes)));
    }

    /** Adds a tensor whose bytes are produced at write time by {@code source}. */
    public GgufWriter addTensor(String name, GgmlType type, long[] shape, TensorSource source) {
        Objects.requireNonNull(source, "source");
        return add(new PendingTensor(name, type, shape.clone(), check(name, type, shape), source));
    }

    /** Copies tensor {@code t} of {@code file} (name, type, shape and bytes). */
    public GgufWriter addTensor(GgufFile file, GgufTensorInfo t) {
        return addTensor(t.name(), t.type(), t.shape(), file.data(t));
    }

    private GgufWriter add(PendingTensor t) {
        if (!tensorNames.add(t.name())) {
            throw new IllegalArgumentException("duplicate tensor name " + t.name());
        }
        tensors.add(t);
        return this;
    }

    private static long check(String name, GgmlType type, long[] shape) {
        Objects.requireNonNull(name, "name");
        // the record validates dims, block multiple and overflow
        return new GgufTensorInfo(name, type, shape, 0).byteSize();
    }

    // --- output

    /** The tensor table this writer will produce (offsets relative to the data section). */
    public List<GgufTensorInfo> plannedTensors() {
        long alignment = alignment();
        List<GgufTensorInfo> out = new ArrayList<>(tensors.size());
        long offset = 0;
        for (PendingTensor t : tensors) {
            out.add(new GgufTensorInfo(t.name(), t.type(), t.shape(), offset));
            offset = GgufParser.alignUp(offset + t.byteSize(), alignment);
        }
        return out;
    }

    private long alignment() {
        GgufValue a = metadata.get(GgufKeys.GENERAL_ALIGNMENT);
        return a == null ? GgufParser.DEFAULT_ALIGNMENT : a.asLong(GgufKeys.GENERAL_ALIGNMENT);
    }

    /**
     * Writes the file: to a temporary file next to {@code path}, forced to disk, then renamed over {@code path}.
     * On any failure the temporary file is deleted and an existing {@code path} is left as it was.
     */
    public void write(Path path) throws IOException {
        Path abs = path.toAbsolutePath();
        Path dir = abs.getParent();
        long alignment = alignment();
        List<GgufTensorInfo> planned = plannedTensors();
        byte[] header = header(planned);
        long dataOffset = GgufParser.alignUp(header.length, alignment);
        long total = header.length; // a file without tensors ends after the header, unpadded (as llama.cpp writes it)
        if (!planned.isEmpty()) {
            GgufTensorInfo last = planned.getLast();
            total = dataOffset + GgufParser.alignUp(last.offset() + last.byteSize(), alignment);
        }
        Path tmp = createTemp(dir, abs.getFileName().toString());
        boolean done = false;
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.READ, StandardOpenOption.WRITE);
                    Arena arena = Arena.ofConfined()) {
                MemorySegment out = ch.map(FileChannel.MapMode.READ_WRITE, 0, total, arena);
                MemorySegment.copy(MemorySegment.ofArray(header), 0, out, 0, header.length);
                for (int i = 0; i < planned.size(); i++) {
                    GgufTensorInfo t = planned.get(i);
                    tensors.get(i).source().writeTo(out.asSlice(dataOffset + t.offset(), t.byteSize()));
                }
                out.force();
            }
            try {
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
            done = true;
        } finally {
            if (!done) {
                Files.deleteIfExists(tmp);
            }
        }
    }

    /**
     * A new empty file next to the target. Not {@code Files.createTempFile}: that makes the file private (0600), and
     * the renamed model would keep those permissions; this one gets the usual umask-derived ones.
     */
    private static Path createTemp(Path dir, String name) throws IOException {
        for (int attempt = 0; ; attempt++) {
            Path p = dir.resolve("." + name + "." + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong()) + ".tmp");
            try {
                return Files.createFile(p);
            } catch (java.nio.file.FileAlreadyExistsException e) {
                if (attempt > 100) {
                    throw e;
                }
            }
        }
    }

    /** Header, metadata and tensor table (GGUF spec "File Structure"), unpadded. */
    private byte[] header(List<GgufTensorInfo> planned) {
        LeBytes b = new LeBytes();
        b.u32(GgufParser.MAGIC);
        b.u32(version);
        b.u64(planned.size());
        b.u64(metadata.size());
        for (Map.Entry<String, GgufValue> e : metadata.entrySet()) {
            b.string(e.getKey());
            b.u32(e.getValue().type().id());
            value(b, e.getValue().type(), e.getValue().value());
        }
        for (GgufTensorInfo t : planned) {
            b.string(t.name());
            b.u32(t.dims());
            for (long d : t.shape()) {
                b.u64(d);
            }
            b.u32(t.type().id);
            b.u64(t.offset());
        }
        return b.toArray();
    }

    private static void value(LeBytes b, GgufValueType type, Object v) {
        switch (type) {
            case UINT8, INT8 -> b.u8((Byte) v);
            case UINT16, INT16 -> b.u16((Short) v);
            case UINT32, INT32 -> b.u32((Integer) v);
            case UINT64, INT64 -> b.u64((Long) v);
            case FLOAT32 -> b.u32(Float.floatToRawIntBits((Float) v));
            case FLOAT64 -> b.u64(Double.doubleToRawLongBits((Double) v));
            case BOOL -> b.u8((Boolean) v ? 1 : 0);
            case STRING -> b.string((String) v);
            case ARRAY -> array(b, (GgufArray) v);
        }
    }

    private static void array(LeBytes b, GgufArray a) {
        b.u32(a.elementType().id());
        b.u64(a.size());
        switch (a.values()) {
            case byte[] x -> {
                for (byte v : x) {
                    b.u8(v);
                }
            }
            case short[] x -> {
                for (short v : x) {
                    b.u16(v);
                }
            }
            case int[] x -> {
                for (int v : x) {
                    b.u32(v);
                }
            }
            case long[] x -> {
                for (long v : x) {
                    b.u64(v);
                }
            }
            case float[] x -> {
                for (float v : x) {
                    b.u32(Float.floatToRawIntBits(v));
                }
            }
            case double[] x -> {
                for (double v : x) {
                    b.u64(Double.doubleToRawLongBits(v));
                }
            }
            case boolean[] x -> {
                for (boolean v : x) {
                    b.u8(v ? 1 : 0);
                }
            }
            case List<?> list -> {
                for (Object o : list) {
                    if (a.elementType() == GgufValueType.STRING) {
                        b.string((String) o);
                    } else {
                        array(b, (GgufArray) o);
                    }
                }
            }
            default -> throw new IllegalStateException("unexpected array storage " + a.values().getClass());
        }
    }

    /** A growable little-endian byte buffer for the header. */
    private static final class LeBytes {
        private byte[] buf = new byte[4096];
        private int n;

        private void ensure(int more) {
            if (n + more > buf.length) {
                long cap = Math.max((long) buf.length * 2, (long) n + more);
                if (cap > Integer.MAX_VALUE - 16) {
                    throw new IllegalStateException("GGUF header larger than 2 GB");
                }
                buf = java.util.Arrays.copyOf(buf, (int) cap);
            }
        }

        void u8(int v) {
            ensure(1);
            buf[n++] = (byte) v;
        }

        void u16(int v) {
            ensure(2);
            buf[n++] = (byte) v;
            buf[n++] = (byte) (v >>> 8);
        }

        void u32(int v) {
            ensure(4);
            for (int i = 0; i < 4; i++) {
                buf[n++] = (byte) (v >>> (8 * i));
            }
        }

        void u64(long v) {
            ensure(8);
            for (int i = 0; i < 8; i++) {
                buf[n++] = (byte) (v >>> (8 * i));
            }
        }

        void string(String s) {
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            u64(bytes.length);
            ensure(bytes.length);
            System.arraycopy(bytes, 0, buf, n, bytes.length);
            n += bytes.length;
        }

        byte[] toArray() {
            return java.util.Arrays.copyOf(buf, n);
        }
    }
}
