package ml.juno.engine.gguf;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/** Hand-assembles GGUF bytes field by field, so tests can build files no writer would produce. */
final class RawGguf {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    /** Magic, version and the two counts. */
    static RawGguf header(int version, long tensorCount, long kvCount) {
        return new RawGguf().u32(GgufParser.MAGIC).u32(version).u64(tensorCount).u64(kvCount);
    }

    int position() {
        return out.size();
    }

    RawGguf u8(int v) {
        out.write(v);
        return this;
    }

    RawGguf u32(long v) {
        for (int i = 0; i < 4; i++) {
            out.write((int) (v >>> (8 * i)));
        }
        return this;
    }

    RawGguf u64(long v) {
        for (int i = 0; i < 8; i++) {
            out.write((int) (v >>> (8 * i)));
        }
        return this;
    }

    RawGguf bytes(byte[] b) {
        out.writeBytes(b);
        return this;
    }

    RawGguf str(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return u64(b.length).bytes(b);
    }

    /** A key with a UINT32 value. */
    RawGguf kvU32(String key, long v) {
        return str(key).u32(GgufValueType.UINT32.id()).u32(v);
    }

    RawGguf kvString(String key, String v) {
        return str(key).u32(GgufValueType.STRING.id()).str(v);
    }

    /** A tensor-table entry. */
    RawGguf tensor(String name, int ggmlType, long offset, long... dims) {
        str(name).u32(dims.length);
        for (long d : dims) {
            u64(d);
        }
        return u32(ggmlType).u64(offset);
    }

    /** Zero bytes up to a multiple of {@code alignment}. */
    RawGguf pad(int alignment) {
        while (out.size() % alignment != 0) {
            out.write(0);
        }
        return this;
    }

    RawGguf zeros(int n) {
        out.writeBytes(new byte[n]);
        return this;
    }

    byte[] toBytes() {
        return out.toByteArray();
    }

    MemorySegment segment() {
        return MemorySegment.ofArray(toBytes());
    }
}
