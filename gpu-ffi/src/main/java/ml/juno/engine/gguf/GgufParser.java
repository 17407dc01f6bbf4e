package ml.juno.engine.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import ml.juno.engine.tensor.GgmlType;

/**
 * Parses the GGUF header, metadata and tensor table (GGUF spec, "File Structure") out of a mapped file, validating
 * every field against the file size before trusting it. Tensor data is not touched.
 */
final class GgufParser {

    /** "GGUF" read as a little-endian u32. */
    static final int MAGIC = 0x46554747;
    static final long DEFAULT_ALIGNMENT = 32;
    /** Nested arrays deeper than this are refused (keeps a hostile file from exhausting the stack). */
    static final int MAX_ARRAY_DEPTH = 8;
    /** Smallest tensor-table entry: empty name (8), n_dims (4), one dim (8), type (4), offset (8). */
    private static final int MIN_TENSOR_INFO_BYTES = 32;
    /** Smallest key/value pair: empty key (8), type (4), a one-byte value. */
    private static final int MIN_KV_BYTES = 13;
    private static final int MAX_COUNT = Integer.MAX_VALUE - 16;

    record Parsed(int version, GgufMetadata metadata, List<GgufTensorInfo> tensors, long alignment, long dataOffset) {}

    private GgufParser() {}

    static Parsed parse(MemorySegment seg) throws GgufFormatException {
        GgufCursor in = new GgufCursor(seg);
        int magic = in.u32("magic");
        if (magic != MAGIC) {
            throw new GgufFormatException("magic", 0, String.format("expected \"GGUF\" (0x%08x), found 0x%08x", MAGIC, magic));
        }
        int version = in.u32("version");
        if (version != 2 && version != 3) {
            String why = Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
                    ? "big-endian GGUF is not supported"
                    : version == 1 ? "GGUF version 1 is not supported" : "unsupported version " + Integer.toUnsignedString(version) + " (expected 2 or 3)";
            throw new GgufFormatException("version", 4, why);
        }
        long tensorCountAt = in.position();
        long tensorCount = in.u64("tensor_count");
        long kvCountAt = in.position();
        long kvCount = in.u64("metadata_kv_count");
        // Everything that follows needs at least this many bytes; refuse early, before allocating.
        if (tensorCount < 0 || tensorCount > in.remaining() / MIN_TENSOR_INFO_BYTES) {
            throw new GgufFormatException("tensor_count", tensorCountAt, "count " + Long.toUnsignedString(tensorCount)
                    + " cannot fit in the " + in.remaining() + " bytes left in the file");
        }
        if (kvCount < 0 || kvCount > (in.remaining() - tensorCount * MIN_TENSOR_INFO_BYTES) / MIN_KV_BYTES) {
            throw new GgufFormatException("metadata_kv_count", kvCountAt, "count " + Long.toUnsignedString(kvCount)
                    + " cannot fit in the " + in.remaining() + " bytes left in the file");
        }

        LinkedHashMap<String, GgufValue> kv = LinkedHashMap.newLinkedHashMap((int) kvCount);
        long alignment = DEFAULT_ALIGNMENT;
        for (int i = 0; i < kvCount; i++) {
            long keyAt = in.position();
            String key = in.string("metadata[" + i + "].key", true);
            String field = "metadata[" + key + "]";
            long typeAt = in.position();
            GgufValueType type = valueType(in.u32(field + ".type"), field + ".type", typeAt);
            long valueAt = in.position();
            GgufValue value = new GgufValue(type, readValue(in, type, field, 0));
            if (key.equals(GgufKeys.GENERAL_ALIGNMENT)) {
                alignment = alignment(value, field, typeAt, valueAt);
            }
            if (kv.putIfAbsent(key, value) != null) {
                throw new GgufFormatException("metadata[" + i + "].key", keyAt, "duplicate key " + key);
            }
        }
        GgufMetadata metadata = new GgufMetadata(kv);

        List<GgufTensorInfo> tensors = new ArrayList<>((int) tensorCount);
        long[] infoAt = new long[(int) tensorCount];
        Set<String> names = new HashSet<>();
        for (int i = 0; i < tensorCount; i++) {
            tensors.add(tensorInfo(in, i, alignment, names));
            infoAt[i] = in.position() - 8; // the offset field, last in the entry
        }
        long dataOffset = alignUp(in.position(), alignment);
        checkBounds(tensors, infoAt, dataOffset, in.size());
        return new Parsed(version, metadata, List.copyOf(tensors), alignment, dataOffset);
    }

    private static GgufValueType valueType(int id, String field, long at) throws GgufFormatException {
        GgufValueType t = GgufValueType.fromId(Integer.toUnsignedLong(id));
        if (t == null) {
            throw new GgufFormatException(field, at, "unknown value type " + Integer.toUnsignedString(id));
        }
        return t;
    }

    private static Object readValue(GgufCursor in, GgufValueType type, String field, int depth) throws GgufFormatException {
        return switch (type) {
            case UINT8, INT8 -> in.u8(field);
            case UINT16, INT16 -> in.u16(field);
            case UINT32, INT32 -> in.u32(field);
            case UINT64, INT64 -> in.u64(field);
            case FLOAT32 -> in.f32(field);
            case FLOAT64 -> in.f64(field);
            case BOOL -> bool(in, field);
            case STRING -> in.string(field, false);
            case ARRAY -> readArray(in, field, depth);
        };
    }

    private static boolean bool(GgufCursor in, String field) throws GgufFormatException {
        long at = in.position();
        byte b = in.u8(field);
        if (b != 0 && b != 1) {
            throw new GgufFormatException(field, at, "BOOL must be 0 or 1, found " + (b & 0xFF));
        }
        return b == 1;
    }

    private static GgufArray readArray(GgufCursor in, String field, int depth) throws GgufFormatException {
        long typeAt = in.position();
        if (depth >= MAX_ARRAY_DEPTH) {
            throw new GgufFormatException(field, typeAt, "arrays nested deeper than " + MAX_ARRAY_DEPTH);
        }
        GgufValueType et = valueType(in.u32(field + ".element_type"), field + ".element_type", typeAt);
        int n = in.count(field + ".count", et.minSize(), MAX_COUNT);
        String ef = field + "[]";
        Object values = switch (et) {
            case UINT8, INT8 -> bulk(in, new byte[n], ValueLayout.JAVA_BYTE, n, ef);
            case UINT16, INT16 -> bulk(in, new short[n], ValueLayout.JAVA_SHORT_UNALIGNED, n, ef);
            case UINT32, INT32 -> bulk(in, new int[n], ValueLayout.JAVA_INT_UNALIGNED, n, ef);
            case UINT64, INT64 -> bulk(in, new long[n], ValueLayout.JAVA_LONG_UNALIGNED, n, ef);
            case FLOAT32 -> bulk(in, new float[n], ValueLayout.JAVA_FLOAT_UNALIGNED, n, ef);
            case FLOAT64 -> bulk(in, new double[n], ValueLayout.JAVA_DOUBLE_UNALIGNED, n, ef);
            case BOOL -> {
                boolean[] b = new boolean[n];
                for (int i = 0; i < n; i++) {
                    b[i] = bool(in, ef); // ef is built once per array, not per element
                }
                yield b;
            }
            case STRING -> {
                String[] s = new String[n];
                for (int i = 0; i < n; i++) {
                    s[i] = in.string(field, i, false);
                }
                yield Arrays.asList(s);
            }
            case ARRAY -> {
                GgufArray[] a = new GgufArray[n];
                for (int i = 0; i < n; i++) {
                    a[i] = readArray(in, field + "[" + i + "]", depth + 1);
                }
                yield List.of(a);
            }
        };
        return new GgufArray(et, et == GgufValueType.STRING ? Collections.unmodifiableList((List<?>) values) : values);
    }

    private static Object bulk(GgufCursor in, Object dst, ValueLayout layout, int n, String field) throws GgufFormatException {
        in.bulk(dst, layout.withOrder(ByteOrder.LITTLE_ENDIAN), n, field);
        return dst;
    }

    private static long alignment(GgufValue v, String field, long typeAt, long valueAt) throws GgufFormatException {
        if (v.type() != GgufValueType.UINT32) {
            throw new GgufFormatException(field + ".type", typeAt, "alignment must be UINT32, found " + v.type());
        }
        long a = v.asLong(GgufKeys.GENERAL_ALIGNMENT);
        if (a == 0 || Long.bitCount(a) != 1) {
            throw new GgufFormatException(field, valueAt, "alignment " + a + " is not a power of two");
        }
        return a;
    }

    private static GgufTensorInfo tensorInfo(GgufCursor in, int i, long alignment, Set<String> names) throws GgufFormatException {
        String f = "tensor[" + i + "]";
        long nameAt = in.position();
        String name = in.string(f + ".name", true);
        if (!names.add(name)) {
            throw new GgufFormatException(f + ".name", nameAt, "duplicate tensor name " + name);
        }
        f = "tensor[" + i + ":" + name + "]";
        long dimsAt = in.position();
        int nDims = in.u32(f + ".n_dims");
        if (nDims < 1 || nDims > GgufTensorInfo.MAX_DIMS) {
            throw new GgufFormatException(f + ".n_dims", dimsAt, Integer.toUnsignedString(nDims) + " dimensions, expected 1.." + GgufTensorInfo.MAX_DIMS);
        }
        long[] shape = new long[nDims];
        long elements = 1;
        for (int d = 0; d < nDims; d++) {
            long at = in.position();
            shape[d] = in.u64(f + ".dims[" + d + "]");
            if (shape[d] < 0) {
                throw new GgufFormatException(f + ".dims[" + d + "]", at, "dimension " + Long.toUnsignedString(shape[d]) + " is too large");
            }
            try {
                elements = Math.multiplyExact(elements, shape[d]);
            } catch (ArithmeticException e) {
                throw new GgufFormatException(f + ".dims[" + d + "]", at, "element count overflows: " + Arrays.toString(shape));
            }
        }
        long typeAt = in.position();
        int typeId = in.u32(f + ".type");
        GgmlType type = GgmlType.fromId(typeId);
        if (type == null) {
            throw new GgufFormatException(f + ".type", typeAt, "unknown ggml type " + Integer.toUnsignedString(typeId));
        }
        if (shape[0] % type.blockSize != 0) {
            throw new GgufFormatException(f + ".dims[0]", dimsAt + 4, "row length " + shape[0] + " is not a multiple of the "
                    + type + " block size " + type.blockSize);
        }
        if (elements / type.blockSize > in.size() / type.typeSize) {
            throw new GgufFormatException(f + ".dims", dimsAt + 4, Arrays.toString(shape) + " of " + type
                    + " is larger than the whole file (" + in.size() + " bytes)");
        }
        long offsetAt = in.position();
        long offset = in.u64(f + ".offset");
        if (offset < 0 || offset > in.size()) {
            throw new GgufFormatException(f + ".offset", offsetAt, "offset " + Long.toUnsignedString(offset) + " is past the end of the file");
        }
        if (offset % alignment != 0) {
            throw new GgufFormatException(f + ".offset", offsetAt, "offset " + offset + " is not a multiple of the alignment " + alignment);
        }
        return new GgufTensorInfo(name, type, shape, offset);
    }

    /** Every tensor lies inside the file, after the header, and no two overlap. */
    private static void checkBounds(List<GgufTensorInfo> tensors, long[] infoAt, long dataOffset, long fileSize) throws GgufFormatException {
        Integer[] order = new Integer[tensors.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
            GgufTensorInfo t = tensors.get(i);
            long end = dataOffset + t.offset() + t.byteSize(); // each term <= fileSize, so no overflow
            if (end > fileSize) {
                throw new GgufFormatException("tensor[" + i + ":" + t.name() + "].offset", infoAt[i], "data ["
                        + (dataOffset + t.offset()) + ", " + end + ") runs past the end of the file (" + fileSize + " bytes)");
            }
        }
        Arrays.sort(order, Comparator.comparingLong(i -> tensors.get(i).offset()));
        long prevEnd = 0;
        int prev = -1;
        for (int i : order) {
            GgufTensorInfo t = tensors.get(i);
            if (t.byteSize() == 0) {
                continue;
            }
            if (t.offset() < prevEnd) {
                throw new GgufFormatException("tensor[" + i + ":" + t.name() + "].offset", infoAt[i], "data at " + t.offset()
                        + " overlaps tensor " + tensors.get(prev).name() + " which ends at " + prevEnd);
            }
            prevEnd = t.offset() + t.byteSize();
            prev = i;
        }
    }

    static long alignUp(long x, long alignment) {
        return (x + alignment - 1) / alignment * alignment;
    }
}
