package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufWriterTest {

    @TempDir
    Path tmp;

    @Test
    void everyValueType_includingNestedArrays_roundTrips() throws IOException {
        GgufArray nested = new GgufArray(GgufValueType.ARRAY, List.of(
                GgufArray.ofStrings(List.of("a", "bé", "")),
                new GgufArray(GgufValueType.ARRAY, List.of(GgufArray.ofInts(new int[] {1, -2}))),
                new GgufArray(GgufValueType.UINT8, new byte[0])));
        GgufWriter w = new GgufWriter()
                .putString("s", "héllo ✓ 🙂")
                .putString("empty", "")
                .putUInt8("u8", 255).putInt8("i8", -128)
                .putUInt16("u16", 65535).putInt16("i16", -32768)
                .putUInt32("u32", 0xFFFF_FFFFL).putInt32("i32", Integer.MIN_VALUE)
                .putUInt64("u64", 1L << 62).putInt64("i64", Long.MIN_VALUE)
                .putFloat32("f32", 1e-5f).putFloat64("f64", Math.PI)
                .putBool("t", true).putBool("f", false)
                .putStrings("strs", List.of("<unk>", "<s>", "▁the"))
                .putInts("ints", new int[] {3, 1, 2})
                .putFloats("floats", new float[] {-0.0f, Float.NaN, Float.MIN_VALUE})
                .putArray("u8s", new GgufArray(GgufValueType.UINT8, new byte[] {(byte) 200, 1}))
                .putArray("i16s", new GgufArray(GgufValueType.INT16, new short[] {-5, 7}))
                .putArray("u64s", new GgufArray(GgufValueType.UINT64, new long[] {-1L, 5}))
                .putArray("f64s", new GgufArray(GgufValueType.FLOAT64, new double[] {1.5, -2}))
                .putArray("bools", new GgufArray(GgufValueType.BOOL, new boolean[] {true, false, true}))
                .putArray("nested", nested);
        Path p = tmp.resolve("all.gguf");
        w.write(p);
        try (GgufFile f = GgufFile.open(p)) {
            GgufMetadata m = f.metadata();
            assertEquals(List.of("s", "empty", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "t", "f",
                    "strs", "ints", "floats", "u8s", "i16s", "u64s", "f64s", "bools", "nested"), List.copyOf(m.keys()));
            assertEquals("héllo ✓ 🙂", m.getString("s"));
            assertEquals("", m.getString("empty"));
            assertEquals(255, m.getInt("u8"));
            assertEquals(-128, m.getInt("i8"));
            assertEquals(65535, m.getInt("u16"));
            assertEquals(-32768, m.getInt("i16"));
            assertEquals(0xFFFF_FFFFL, m.getLong("u32"));
            assertThrows(IllegalArgumentException.class, () -> m.getInt("u32"), "4294967295 does not fit an int");
            assertEquals(Integer.MIN_VALUE, m.getInt("i32"));
            assertEquals(1L << 62, m.getLong("u64"));
            assertEquals(Long.MIN_VALUE, m.getLong("i64"));
            assertEquals(1e-5f, m.getFloat("f32"));
            assertEquals(Math.PI, m.getDouble("f64"));
            assertTrue(m.getBool("t"));
            assertEquals(false, m.getBool("f"));
            assertEquals(List.of("<unk>", "<s>", "▁the"), m.getStringArray("strs"));
            assertArrayEquals(new int[] {3, 1, 2}, m.getIntArray("ints"));
            float[] fl = m.getFloatArray("floats");
            assertEquals(Float.floatToRawIntBits(-0.0f), Float.floatToRawIntBits(fl[0]));
            assertTrue(Float.isNaN(fl[1]));
            assertArrayEquals(new int[] {200, 1}, m.getIntArray("u8s"), "UINT8 is unsigned");
            assertArrayEquals(new int[] {-5, 7}, m.getIntArray("i16s"));
            assertThrows(IllegalArgumentException.class, () -> m.getIntArray("u64s"), "2^64-1 does not fit an int");
            assertArrayEquals(new long[] {-1L, 5}, m.getLongArray("u64s"));
            assertArrayEquals(new float[] {1.5f, -2f}, m.getFloatArray("f64s"));
            assertEquals(new GgufArray(GgufValueType.BOOL, new boolean[] {true, false, true}), m.getRaw("bools"));
            assertEquals(nested, m.getRaw("nested"));
            assertEquals(GgufValueType.ARRAY, m.arrayElementType("nested"));
            assertEquals(0, f.tensors().size());
        }
    }

    @Test
    void copyOfShippedModel_isByteIdenticalToTheOriginal() throws IOException {
        for (String name : List.of("stories260K-Q8_0.gguf", "tiny-random/tiny-qwen3moe-random-Q4_K_M.gguf", "vocab/ggml-vocab-gpt-2.gguf")) {
            Path src = TestModels.testdata().resolve(name);
            Path dst = tmp.resolve("copy.gguf");
            try (GgufFile f = GgufFile.open(src)) {
                GgufWriter w = new GgufWriter().putAll(f.metadata());
                for (GgufTensorInfo t : f.tensors()) {
                    w.addTensor(f, t);
                }
                assertEquals(f.tensors(), w.plannedTensors(), name + " same offsets");
                w.write(dst);
            }
            try (GgufFile a = GgufFile.open(src); GgufFile b = GgufFile.open(dst)) {
                assertEquals(a.metadata(), b.metadata(), name);
                assertEquals(a.tensors(), b.tensors(), name);
                assertEquals(a.dataOffset(), b.dataOffset(), name);
                for (GgufTensorInfo t : a.tensors()) {
                    assertEquals(-1, a.data(t).mismatch(b.data(t)), name + " " + t.name());
                }
            }
            byte[] want = Files.readAllBytes(src);
            byte[] got = Files.readAllBytes(dst);
            assertEquals(want.length, got.length, name + " size");
            assertArrayEquals(want, got, name + " bytes");
        }
    }

    @Test
    void tensorsFromSources_customAlignmentAndVersion2_roundTrip() throws IOException {
        Path p = tmp.resolve("v2.gguf");
        byte[] q8 = new byte[3 * 34];
        for (int i = 0; i < q8.length; i++) {
            q8[i] = (byte) (i * 7);
        }
        new GgufWriter().version(2).alignment(64)
                .putString(GgufKeys.GENERAL_ARCHITECTURE, "llama")
                .addTensor("a", GgmlType.F32, new long[] {3}, dst -> {
                    for (int i = 0; i < 3; i++) {
                        dst.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), i, i + 0.5f);
                    }
                })
                .addTensor("b", GgmlType.Q8_0, new long[] {32, 3}, MemorySegment.ofArray(q8))
                .addTensor("c", GgmlType.F16, new long[] {1, 1, 1, 5}, dst -> dst.fill((byte) 0x3c))
                .write(p);
        try (GgufFile f = GgufFile.open(p)) {
            assertEquals(2, f.version());
            assertEquals(64, f.alignment());
            assertEquals(0, f.dataOffset() % 64);
            assertEquals(List.of(0L, 64L, 192L), f.tensors().stream().map(GgufTensorInfo::offset).toList());
            assertEquals(1.5f, f.data(f.tensor("a")).getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 1));
            assertArrayEquals(q8, f.data(f.tensor("b")).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(new long[] {1, 1, 1, 5}, f.tensor("c").shape());
            assertEquals(4, f.tensor("c").dims());
            assertEquals(10, f.data(f.tensor("c")).byteSize());
            assertEquals(f.dataOffset() + 192 + 64, f.fileSize(), "the last tensor is padded to the alignment too");
        }
    }

    @Test
    void failedWrite_leavesTheExistingFileAndNoTemporaryFile() throws IOException {
        Path p = tmp.resolve("model.gguf");
        new GgufWriter().putString("k", "first").write(p);
        byte[] before = Files.readAllBytes(p);
        GgufWriter w = new GgufWriter().putString("k", "second")
                .addTensor("t", GgmlType.F32, new long[] {4}, dst -> {
                    throw new IOException("source failed");
                });
        IOException e = assertThrows(IOException.class, () -> w.write(p));
        assertEquals("source failed", e.getMessage());
        assertArrayEquals(before, Files.readAllBytes(p));
        try (Stream<Path> s = Files.list(tmp)) {
            assertEquals(List.of(p), s.toList(), "no temporary file left behind");
        }
        new GgufWriter().putString("k", "third").write(p);
        if (p.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Path plain = Files.createFile(tmp.resolve("plain"));
            assertEquals(Files.getPosixFilePermissions(plain), Files.getPosixFilePermissions(p),
                    "the written model gets ordinary permissions, not a private temp file's");
            Files.delete(plain);
        }
        try (GgufFile f = GgufFile.open(p)) {
            assertEquals("third", f.metadata().getString("k"), "an existing file is replaced");
        }
    }

    @Test
    void badTensorsAndValues_areRefusedWhenAdded() {
        GgufWriter w = new GgufWriter().addTensor("x", GgmlType.F32, new long[] {2}, MemorySegment.ofArray(new byte[8]));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("x", GgmlType.F32, new long[] {2}, MemorySegment.ofArray(new byte[8])));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("y", GgmlType.F32, new long[] {2}, MemorySegment.ofArray(new byte[7])));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("z", GgmlType.Q4_0, new long[] {31}, dst -> { }));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("z", GgmlType.F32, new long[] {1, 1, 1, 1, 1}, dst -> { }));
        assertThrows(IllegalArgumentException.class, () -> w.putUInt8("k", 256));
        assertThrows(IllegalArgumentException.class, () -> w.putUInt32("k", -1));
        assertThrows(IllegalArgumentException.class, () -> w.alignment(48));
        assertThrows(IllegalArgumentException.class, () -> w.putFloat32(GgufKeys.GENERAL_ALIGNMENT, 32));
        assertThrows(IllegalArgumentException.class, () -> w.put("k", GgufValueType.UINT32, "not an int"));
        assertThrows(IllegalArgumentException.class, () -> w.putArray("k", new GgufArray(GgufValueType.INT32, new float[1])));
    }
}
