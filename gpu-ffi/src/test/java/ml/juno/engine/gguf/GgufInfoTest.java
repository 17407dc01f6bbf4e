package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufInfoTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void text_summarisesLongArraysAndListsEveryTensor() throws IOException {
        try (GgufFile f = GgufFile.open(TestModels.testdata().resolve("llama-2-tiny-random.gguf"))) {
            String text = GgufInfo.text(f);
            assertTrue(text.contains("[32000 strings: \"<unk>\", \"<s>\", \"</s>\", \"<0x00>\", \"<0x01>\", …]"), text);
            assertTrue(text.contains("GGUF v3"), text);
            for (GgufTensorInfo t : f.tensors()) {
                String line = text.lines().filter(l -> l.trim().startsWith(t.name() + " ")).findFirst().orElseThrow();
                assertTrue(line.contains(t.type().name()) && line.contains(Long.toString(t.byteSize()))
                        && line.contains(Long.toString(t.offset())), line);
            }
            assertTrue(text.length() < 10_000, "a 32000-token vocabulary is summarised, not dumped");
        }
    }

    @Test
    void description_agreesWithTheReader() throws IOException {
        try (GgufFile f = GgufFile.open(TestModels.testdata().resolve("tiny-random/tiny-qwen3moe-random-Q4_K_M.gguf"))) {
            JsonNode j = JSON.valueToTree(GgufInfo.describe(f));
            assertEquals(f.fileSize(), j.get("file_size").asLong());
            assertEquals(3, j.get("version").asInt());
            assertEquals(f.dataOffset(), j.get("data_offset").asLong());
            JsonNode md = j.get("metadata");
            assertEquals(f.metadata().size(), md.size());
            assertEquals("qwen3moe", md.get("general.architecture").get("value").asText());
            JsonNode tokens = md.get("tokenizer.ggml.tokens");
            assertEquals("STRING", tokens.get("element_type").asText());
            assertEquals(512, tokens.get("count").asInt());
            assertEquals(GgufInfo.JSON_ARRAY_PREVIEW, tokens.get("values").size());
            assertEquals(f.metadata().getStringArray("tokenizer.ggml.tokens").get(3), tokens.get("values").get(3).asText());
            float eps = f.metadata().getFloat("qwen3moe.attention.layer_norm_rms_epsilon");
            assertEquals(eps, (float) md.get("qwen3moe.attention.layer_norm_rms_epsilon").get("value").asDouble());
            assertEquals(f.tensors().size(), j.get("tensors").size());
            for (int i = 0; i < f.tensors().size(); i++) {
                GgufTensorInfo t = f.tensors().get(i);
                JsonNode jt = j.get("tensors").get(i);
                assertEquals(t.name(), jt.get("name").asText());
                assertEquals(t.type().name(), jt.get("type").asText());
                assertEquals(t.offset(), jt.get("offset").asLong());
                assertEquals(t.byteSize(), jt.get("bytes").asLong());
                assertEquals(t.dims(), jt.get("shape").size());
                assertEquals(t.shape()[0], jt.get("shape").get(0).asLong());
            }
        }
    }

    @Test
    void description_asJson_keepsAwkwardStringsAndEveryValueType() throws IOException {
        Path p = tmp.resolve("odd.gguf");
        String awkward = "quote\" backslash\\ newline\n tab\t nul\u0000 bell\u0007 emoji🙂 {% if %}";
        new GgufWriter().putString("s", awkward).putFloat32("nan", Float.NaN).putFloat64("inf", Double.NEGATIVE_INFINITY)
                .putFloat32("tiny", 1e-5f).putUInt64("big", -1L).putUInt8("u8", 250).putBool("b", true)
                .putArray("nested", new GgufArray(GgufValueType.ARRAY, List.of(GgufArray.ofInts(new int[] {1, 2}))))
                .putStrings("strs", List.of(awkward)).write(p);
        try (GgufFile f = GgufFile.open(p)) {
            JsonNode md = JSON.readTree(JSON.writeValueAsString(GgufInfo.describe(f, Integer.MAX_VALUE))).get("metadata");
            assertEquals(awkward, md.get("s").get("value").asText());
            assertEquals("NaN", md.get("nan").get("value").asText());
            assertEquals("-Infinity", md.get("inf").get("value").asText());
            assertEquals(1e-5f, (float) md.get("tiny").get("value").asDouble());
            assertEquals("18446744073709551615", md.get("big").get("value").bigIntegerValue().toString());
            assertEquals(250, md.get("u8").get("value").asInt());
            assertTrue(md.get("b").get("value").asBoolean());
            JsonNode inner = md.get("nested").get("values").get(0);
            assertEquals("INT32", inner.get("element_type").asText());
            assertEquals(2, inner.get("values").get(1).asInt());
            assertEquals(awkward, md.get("strs").get("values").get(0).asText());
            String text = GgufInfo.text(f);
            assertTrue(text.contains("\"quote\\\" backslash\\\\ newline\\n tab\\t nul\\x00"), text);
            assertTrue(text.contains("18446744073709551615"), text);
        }
    }
}
