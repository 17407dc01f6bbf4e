package ml.juno.engine.quantize;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.gguf.GgufArray;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufValueType;
import ml.juno.engine.tensor.GgmlType;

/**
 * Writes a GGUF v3 file whose tensor data arrives in pieces, from any number of threads. Every tensor's type and
 * shape is known up front, so the header, metadata and tensor table are written at once and each tensor's data
 * has a fixed file position; workers then write rows at absolute positions ({@link #write(long, ByteBuffer)})
 * and nothing the size of a tensor is held in memory. Layout as ggml's gguf writer: tensors in the given order,
 * each padded with zeros to the alignment (also after the last one).
 */
public final class GgufStreamWriter implements AutoCloseable {

    /** One metadata entry; {@code value} as {@code GgufMetadata.getRaw} returns it (arrays as {@link GgufArray}). */
    public record Entry(String key, GgufValueType type, Object value) {
        public Entry {
            if (key == null || key.isEmpty() || type == null || value == null) {
                throw new IllegalArgumentException("metadata entry needs a key, a type and a value");
            }
        }

        public static Entry string(String key, String value) {
            return new Entry(key, GgufValueType.STRING, value);
        }

        public static Entry u32(String key, int value) {
            return new Entry(key, GgufValueType.UINT32, value);
        }

        public static Entry f32(String key, float value) {
            return new Entry(key, GgufValueType.FLOAT32, value);
        }

        public static Entry bool(String key, boolean value) {
            return new Entry(key, GgufValueType.BOOL, value);
        }
    }

    /** A tensor to be written: name, type and ggml-order shape ({@code shape[0]} = row length). */
    public record TensorSpec(String name, GgmlType type, long[] shape) {
        public TensorSpec {
            if (name == null || type == null || shape == null || shape.length == 0 || shape.length > 4) {
                throw new IllegalArgumentException("tensor needs a name, a type and 1..4 dims");
            }
            shape = shape.clone();
            long n = 1;
            for (long d : shape) {
                if (d <= 0) {
                    throw new IllegalArgumentException("tensor " + name + ": bad dim " + d);
                }
                n = Math.multiplyExact(n, d);
            }
            if (shape[0] % type.blockSize != 0) {
                throw new IllegalArgumentException("tensor " + name + ": rows of " + shape[0] + " do not divide into "
                        + type + " blocks of " + type.blockSize);
            }
        }

        public long rowLength() {
            return shape[0];
        }

        public long rowCount() {
            long n = 1;
            for (int i = 1; i < shape.length; i++) {
                n *= shape[i];
            }
            return n;
        }

        public long rowBytes() {
            return type.byteSize(shape[0]);
        }

        public long byteSize() {
            return rowBytes() * rowCount();
        }
    }

    private static final int VERSION = 3;
    private static final int DEFAULT_ALIGNMENT = 32;

    private final FileChannel channel;
    private final long[] dataPositions;
    private final long fileSize;

    private GgufStreamWriter(FileChannel channel, long[] dataPositions, long fileSize) {
        this.channel = channel;
        this.dataPositions = dataPositions;
        this.fileSize = fileSize;
    }

    /** Creates (or truncates) {@code path} and writes everything but the tensor data. */
    public static GgufStreamWriter create(Path path, List<Entry> metadata, List<TensorSpec> tensors) throws IOException {
        int alignment = DEFAULT_ALIGNMENT;
        for (Entry e : metadata) {
            if (e.key().equals(GgufKeys.GENERAL_ALIGNMENT)) {
                alignment = ((Number) e.value()).intValue();
                if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
                    throw new IllegalArgumentException("general.alignment must be a power of two, was " + alignment);
                }
            }
        }
        Bytes out = new Bytes();
        out.raw(new byte[] {'G', 'G', 'U', 'F'});
        out.u32(VERSION);
        out.u64(tensors.size());
        out.u64(metadata.size());
        for (Entry e : metadata) {
            out.string(e.key());
            out.u32(e.type().id());
            out.value(e.type(), e.value());
        }
        long[] relative = new long[tensors.size()];
        long offset = 0;
        List<String> names = new ArrayList<>();
        for (int i = 0; i < tensors.size(); i++) {
            TensorSpec t = tensors.get(i);
            if (names.contains(t.name())) {
                throw new IllegalArgumentException("duplicate tensor name " + t.name());
            }
            names.add(t.name());
            out.string(t.name());
            out.u32(t.shape().length);
            for (long d : t.shape()) {
                out.u64(d);
            }
            out.u32(t.type().id);
            out.u64(offset);
            relative[i] = offset;
            offset += pad(t.byteSize(), alignment);
        }
        long dataStart = pad(out.size(), alignment);
        byte[] header = out.toByteArray();
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        try {
            ByteBuffer hb = ByteBuffer.allocate((int) dataStart);
            hb.put(header);
            hb.position(0);
            writeFully(ch, hb, 0);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        long[] positions = new long[relative.length];
        for (int i = 0; i < relative.length; i++) {
            positions[i] = dataStart + relative[i];
        }
        return new GgufStreamWriter(ch, positions, dataStart + offset);
    }

    /** The absolute file position of tensor {@code index}'s first data byte. */
    public long dataPosition(int index) {
        return dataPositions[index];
    }

    /** Writes all remaining bytes of {@code buf} at absolute {@code position}; safe to call from many threads. */
    public void write(long position, ByteBuffer buf) throws IOException {
        writeFully(channel, buf, position);
    }

    /** Pads the file to its full size (zeros after the last tensor) and closes it. */
    @Override
    public void close() throws IOException {
        try {
            if (channel.isOpen() && channel.size() < fileSize) {
                writeFully(channel, ByteBuffer.allocate(1), fileSize - 1);
            }
        } finally {
            channel.close();
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf, long position) throws IOException {
        long pos = position;
        while (buf.hasRemaining()) {
            pos += ch.write(buf, pos);
        }
    }

    static long pad(long n, int alignment) {
        return (n + alignment - 1) / alignment * alignment;
    }

    /** A little-endian byte sink for the header. */
    private static final class Bytes {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 16);
        private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);

        int size() {
            return out.size();
        }

        byte[] toByteArray() {
            return out.toByteArray();
        }

        void raw(byte[] b) {
            out.writeBytes(b);
        }

        void u8(int v) {
            out.write(v);
        }

        void u16(int v) {
            scratch.clear();
            scratch.putShort((short) v);
            out.write(scratch.array(), 0, 2);
        }

        void u32(int v) {
            scratch.clear();
            scratch.putInt(v);
            out.write(scratch.array(), 0, 4);
        }

        void u64(long v) {
            scratch.clear();
            scratch.putLong(v);
            out.write(scratch.array(), 0, 8);
        }

        void string(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u64(b.length);
            out.writeBytes(b);
        }

        void value(GgufValueType type, Object v) {
            switch (type) {
                case UINT8, INT8 -> u8(((Number) v).intValue());
                case UINT16, INT16 -> u16(((Number) v).intValue());
                case UINT32, INT32 -> u32(((Number) v).intValue());
                case UINT64, INT64 -> u64(((Number) v).longValue());
                case FLOAT32 -> u32(Float.floatToRawIntBits(((Number) v).floatValue()));
                case FLOAT64 -> u64(Double.doubleToRawLongBits(((Number) v).doubleValue()));
                case BOOL -> u8(((Boolean) v) ? 1 : 0);
                case STRING -> string((String) v);
                case ARRAY -> array((GgufArray) v);
            }
        }

        private void array(GgufArray a) {
            u32(a.elementType().id());
            u64(a.size());
            switch (a.values()) {
                case byte[] b -> raw(b);
                case short[] s -> {
                    for (short x : s) {
                        u16(x);
                    }
                }
                case int[] s -> {
                    for (int x : s) {
                        u32(x);
                    }
                }
                case long[] s -> {
                    for (long x : s) {
                        u64(x);
                    }
                }
                case float[] s -> {
                    for (float x : s) {
                        u32(Float.floatToRawIntBits(x));
                    }
                }
                case double[] s -> {
                    for (double x : s) {
                        u64(Double.doubleToRawLongBits(x));
                    }
                }
                case boolean[] s -> {
                    for (boolean x : s) {
                        u8(x ? 1 : 0);
                    }
                }
                case List<?> l -> {
                    for (Object o : l) {
                        value(a.elementType(), o);
                    }
                }
                default -> throw new IllegalArgumentException("unsupported array payload " + a.values().getClass());
            }
        }
    }
}
