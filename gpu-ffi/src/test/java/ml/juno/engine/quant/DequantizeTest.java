package ml.juno.engine.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TestModels;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;

class DequantizeTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void shippedTensors_matchLlamaCppReferenceBitForBit() throws Exception {
        JsonNode ref = JSON.readTree(TestModels.testdata().resolve("reference/dequant.json").toFile());
        Set<String> typesSeen = new TreeSet<>();
        int tensors = 0;
        for (Iterator<Map.Entry<String, JsonNode>> files = ref.get("files").fields(); files.hasNext(); ) {
            Map.Entry<String, JsonNode> file = files.next();
            try (GgufFile f = GgufFile.open(TestModels.testdata().resolve(file.getKey()))) {
                for (Iterator<Map.Entry<String, JsonNode>> ts = file.getValue().fields(); ts.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = ts.next();
                    GgufTensorInfo t = f.tensor(e.getKey());
                    JsonNode want = e.getValue();
                    String where = file.getKey() + " " + e.getKey();
                    assertEquals(want.get("type").asText(), t.type().name(), where);
                    for (int i = 0; i < want.get("shape").size(); i++) {
                        assertEquals(want.get("shape").get(i).asLong(), t.shape()[i], where + " shape");
                    }
                    float[] got = Dequantize.tensor(f, t);
                    assertFirstValues(want.get("first64"), got, where);
                    assertEquals(want.get("sha256").asText(), sha256(got), where + " sha256 of float32 values");
                    typesSeen.add(t.type().name());
                    tensors++;
                }
            }
        }
        assertTrue(tensors >= 70, "tensors checked: " + tensors);
        assertEquals(new TreeSet<>(Set.of("F32", "F16", "Q4_0", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K")), typesSeen);
    }

    @Test
    void otherBlockTypes_matchGgufPyReferenceBitForBit() throws Exception {
        JsonNode ref = readResource("/quant/gguf-py-reference.json");
        Set<String> typesSeen = new TreeSet<>();
        for (JsonNode t : ref.get("tensors")) {
            GgmlType type = GgmlType.valueOf(t.get("type").asText());
            byte[] blocks = HexFormat.of().parseHex(t.get("blocks_hex").asText());
            int count = t.get("count").asInt();
            assertEquals(type.byteSize(count), blocks.length, type + " block bytes");
            // an odd offset inside a bigger segment: the readers must not assume alignment or offset 0
            MemorySegment seg = MemorySegment.ofArray(new byte[blocks.length + 3]);
            MemorySegment.copy(MemorySegment.ofArray(blocks), 0, seg, 3, blocks.length);
            float[] got = new float[count + 5];
            Dequantize.row(type, seg, 3, got, 5, count);
            float[] values = java.util.Arrays.copyOfRange(got, 5, got.length);
            assertFirstValues(t.get("first64"), values, type.name());
            assertEquals(t.get("sha256").asText(), sha256(values), type + " sha256");
            typesSeen.add(type.name());
        }
        assertEquals(new TreeSet<>(Set.of("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "BF16", "IQ4_NL")), typesSeen);
    }

    @Test
    void q8K_isScaleTimesSignedBytes_ignoringBlockSums() {
        // Two blocks built by hand: f32 d, 256 int8, 16 int16 block sums (garbage on purpose).
        ByteBuffer b = ByteBuffer.allocate(2 * 292).order(ByteOrder.LITTLE_ENDIAN);
        float[] d = {0.03125f, -1.7f};
        for (int blk = 0; blk < 2; blk++) {
            b.putFloat(d[blk]);
            for (int j = 0; j < 256; j++) {
                b.put((byte) (j * 37 + blk * 11 - 128));
            }
            for (int j = 0; j < 16; j++) {
                b.putShort((short) 0x7abc);
            }
        }
        float[] out = new float[512];
        Dequantize.row(GgmlType.Q8_K, MemorySegment.ofArray(b.array()), 0, out, 0, 512);
        for (int blk = 0; blk < 2; blk++) {
            for (int j = 0; j < 256; j++) {
                byte q = (byte) (j * 37 + blk * 11 - 128);
                assertEquals(Float.floatToIntBits(d[blk] * q), Float.floatToIntBits(out[blk * 256 + j]), "block " + blk + " value " + j);
            }
        }
    }

    @Test
    void everyListedType_isSupported_andOthersAreRefusedByName() {
        for (GgmlType t : EnumSet.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0,
                GgmlType.Q5_1, GgmlType.Q8_0, GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K,
                GgmlType.Q8_K, GgmlType.IQ4_NL)) {
            assertTrue(Dequantize.supports(t), t.name());
            float[] out = new float[t.blockSize];
            Dequantize.row(t, MemorySegment.ofArray(new byte[t.typeSize]), 0, out, 0, t.blockSize); // zero block decodes
            for (float v : out) {
                assertEquals(0f, Math.abs(v), t.name() + ": an all-zero block is all zeros");
            }
        }
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> Dequantize.row(GgmlType.IQ2_XXS, MemorySegment.ofArray(new byte[66]), 0, new float[256], 0, 256));
        assertTrue(e.getMessage().contains("IQ2_XXS"));
    }

    @Test
    void row_refusesPartialBlocksAndShortDestinations() {
        MemorySegment seg = MemorySegment.ofArray(new byte[144 * 2]);
        assertThrows(IllegalArgumentException.class, () -> Dequantize.row(GgmlType.Q4_K, seg, 0, new float[512], 0, 100));
        assertThrows(IndexOutOfBoundsException.class, () -> Dequantize.row(GgmlType.Q4_K, seg, 0, new float[300], 0, 512));
        assertThrows(IndexOutOfBoundsException.class, () -> Dequantize.row(GgmlType.Q4_K, seg, 144, new float[512], 0, 512),
                "reading past the source segment");
    }

    static void assertFirstValues(JsonNode first, float[] got, String where) {
        for (int i = 0; i < first.size(); i++) {
            float want = (float) first.get(i).asDouble();
            assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(got[i]), where + " value " + i + ": want " + want + " got " + got[i]);
        }
    }

    static String sha256(float[] values) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(values);
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b.array()));
    }

    static JsonNode readResource(String name) throws IOException {
        try (InputStream in = DequantizeTest.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("missing test resource " + name);
            }
            return JSON.readTree(in);
        }
    }
}
