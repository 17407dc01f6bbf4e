package ml.juno.engine.quantize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import ml.juno.engine.gguf.GgufArray;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufValueType;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The streaming writer's files read back with the project's GGUF reader. */
class GgufStreamWriterTest {

    @TempDir
    Path tmp;

    @Test
    void write_everyValueTypeAndOutOfOrderTensorData_readsBack() throws IOException {
        Path p = tmp.resolve("t.gguf");
        List<GgufStreamWriter.Entry> md = List.of(
                new GgufStreamWriter.Entry("u8", GgufValueType.UINT8, (byte) 200),
                new GgufStreamWriter.Entry("i16", GgufValueType.INT16, (short) -3),
                GgufStreamWriter.Entry.u32("u32", 7),
                new GgufStreamWriter.Entry("i64", GgufValueType.INT64, -5L),
                GgufStreamWriter.Entry.f32("f32", 1.5f),
                new GgufStreamWriter.Entry("f64", GgufValueType.FLOAT64, 2.25),
                GgufStreamWriter.Entry.bool("b", true),
                GgufStreamWriter.Entry.string("s", "héllo"),
                new GgufStreamWriter.Entry("strs", GgufValueType.ARRAY, GgufArray.ofStrings(List.of("a", "", "ü"))),
                new GgufStreamWriter.Entry("ints", GgufValueType.ARRAY, GgufArray.ofInts(new int[] {1, -2, 3})));
        List<GgufStreamWriter.TensorSpec> tensors = List.of(
                new GgufStreamWriter.TensorSpec("a", GgmlType.F32, new long[] {3}),
                new GgufStreamWriter.TensorSpec("b", GgmlType.Q8_0, new long[] {32, 2}));
        byte[] b = new byte[68];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) i;
        }
        try (GgufStreamWriter w = GgufStreamWriter.create(p, md, tensors)) {
            w.write(w.dataPosition(1) + 34, ByteBuffer.wrap(b, 34, 34));   // second row first
            w.write(w.dataPosition(1), ByteBuffer.wrap(b, 0, 34));
            w.write(w.dataPosition(0), ByteBuffer.wrap(new byte[] {0, 0, (byte) 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40}));
        }
        try (GgufFile f = GgufFile.open(p)) {
            assertEquals(200, f.metadata().getInt("u8"));
            assertEquals(-3, f.metadata().getInt("i16"));
            assertEquals(7, f.metadata().getInt("u32"));
            assertEquals(-5, f.metadata().getLong("i64"));
            assertEquals(1.5f, f.metadata().getFloat("f32"));
            assertEquals(2.25, f.metadata().getDouble("f64"));
            assertEquals(true, f.metadata().getBool("b"));
            assertEquals("héllo", f.metadata().getString("s"));
            assertEquals(List.of("a", "", "ü"), f.metadata().getStringArray("strs"));
            assertArrayEquals(new int[] {1, -2, 3}, f.metadata().getIntArray("ints"));
            assertEquals(List.of("a", "b"), f.tensors().stream().map(t -> t.name()).toList());
            assertArrayEquals(b, QuantFixtures.bytes(f, f.tensor("b")));
            assertArrayEquals(new float[] {1, 2, 3}, ml.juno.engine.quant.Dequantize.tensor(f, f.tensor("a")));
            assertEquals(0, f.fileSize() % 32, "padded after the last tensor");
        }
    }

    @Test
    void tensorSpec_rejectsRowsThatAreNotWholeBlocks() {
        assertThrows(IllegalArgumentException.class, () -> new GgufStreamWriter.TensorSpec("x", GgmlType.Q4_K, new long[] {100, 2}));
        assertThrows(IllegalArgumentException.class, () -> new GgufStreamWriter.TensorSpec("x", GgmlType.F32, new long[] {0}));
    }

    @Test
    void create_rejectsDuplicateNames() {
        GgufStreamWriter.TensorSpec t = new GgufStreamWriter.TensorSpec("x", GgmlType.F32, new long[] {4});
        assertThrows(IllegalArgumentException.class, () -> GgufStreamWriter.create(tmp.resolve("d.gguf"), List.of(), List.of(t, t)));
    }

    @Test
    void consoleProgress_drawsABarAndEndsTheLineAtTheEnd() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ConsoleProgress p = ConsoleProgress.to(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        p.progress("quantize", 1, 4);
        p.progress("quantize", 1, 4);   // unchanged: not redrawn
        p.progress("quantize", 4, 4);
        String s = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(2, s.chars().filter(c -> c == '\r').count(), s);
        assertEquals(true, s.contains("25.0%") && s.contains("100.0%") && s.endsWith(System.lineSeparator()), s);
    }
}
