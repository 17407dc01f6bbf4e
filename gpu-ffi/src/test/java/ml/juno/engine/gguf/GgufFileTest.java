package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;

class GgufFileTest {

    @Test
    void everyShippedModel_opensWithTensorsInsideTheFileAndAligned() throws IOException {
        List<Path> files = TestModels.allGgufFiles();
        assertTrue(files.size() >= 33, "expected every shipped model, found " + files.size());
        for (Path p : files) {
            try (GgufFile f = GgufFile.open(p)) {
                assertEquals(3, f.version(), p + " version");
                assertEquals(Files.size(p), f.fileSize());
                assertEquals(0, f.dataOffset() % f.alignment(), p + " data offset aligned");
                assertTrue(f.metadata().has(GgufKeys.GENERAL_ARCHITECTURE), p + " has an architecture");
                long prevEnd = 0;
                for (GgufTensorInfo t : f.tensors()) {
                    MemorySegment d = f.data(t);
                    assertEquals(t.byteSize(), d.byteSize(), t.name());
                    assertTrue(d.isReadOnly(), t.name() + " slice is read-only");
                    assertEquals(0, t.offset() % f.alignment(), t.name() + " aligned");
                    assertTrue(t.offset() >= prevEnd, t.name() + " after the previous tensor (file order)");
                    assertTrue(f.dataOffset() + t.offset() + t.byteSize() <= f.fileSize(), t.name() + " inside the file");
                    prevEnd = t.offset() + t.byteSize();
                    assertEquals(t.rowLength() * t.rowCount(), t.elementCount());
                }
            }
        }
    }

    @Test
    void copiesLiveAsLongAsTheFile() throws IOException {
        Path p = TestModels.allGgufFiles().getFirst();
        MemorySegment copy;
        try (GgufFile f = GgufFile.open(p)) {
            copy = f.allocateCopy(1000);
            assertEquals(1000, copy.byteSize());
            assertEquals(0, copy.address() % 64, "64-byte aligned");
            copy.set(ValueLayout.JAVA_INT, 996, 42);
            assertEquals(42, copy.get(ValueLayout.JAVA_INT, 996));
        }
        MemorySegment freed = copy;
        assertThrows(IllegalStateException.class, () -> freed.get(ValueLayout.JAVA_INT, 0), "freed with the file");
    }

    @Test
    void everyShippedModel_agreesWithSourcesTable_sizeShaAndTensorTypeCounts() throws Exception {
        SourcesTable table = SourcesTable.load(TestModels.testdata().resolve("SOURCES.md"));
        assertTrue(table.rows().size() >= 33, "rows parsed from SOURCES.md: " + table.rows().keySet());
        Map<String, Path> byName = new TreeMap<>();
        for (Path p : TestModels.allGgufFiles()) {
            byName.put(p.getFileName().toString(), p);
        }
        List<String> checked = new ArrayList<>();
        for (SourcesTable.Row row : table.rows().values()) {
            Path p = byName.get(row.fileName());
            assertNotNull(p, "listed in SOURCES.md but not shipped: " + row.fileName());
            assertEquals(row.size(), Files.size(p), row.fileName() + " size");
            assertEquals(row.sha256(), sha256(p), row.fileName() + " sha256");
            try (GgufFile f = GgufFile.open(p)) {
                assertEquals(row.typeCounts(), typeCounts(f), row.fileName() + " tensor type counts");
            }
            checked.add(row.fileName());
        }
        // The F32 master is described in the text (section 5), not in a table: all F32, same table as the F16 copy.
        try (GgufFile f32 = GgufFile.open(TestModels.testdata().resolve("tiny-random/tiny-llama-random-F32.gguf"));
                GgufFile f16 = GgufFile.open(TestModels.testdata().resolve("tiny-random/tiny-llama-random-F16.gguf"))) {
            assertEquals(Map.of("F32", f16.tensors().size()), typeCounts(f32));
            for (GgufTensorInfo t : f16.tensors()) { // llama-quantize may reorder the table; names and shapes must agree
                assertArrayEquals(t.shape(), f32.tensor(t.name()).shape(), t.name());
            }
            checked.add("tiny-llama-random-F32.gguf");
        }
        assertEquals(byName.keySet(), new java.util.TreeSet<>(checked), "every shipped model is checked");
    }

    @Test
    void stories260K_hyperParametersMatchSources() throws IOException {
        try (GgufFile f = GgufFile.open(TestModels.dir().resolve("stories260K.gguf"))) {
            GgufMetadata m = f.metadata();
            assertEquals("llama", m.getString(GgufKeys.GENERAL_ARCHITECTURE));
            assertEquals(5, m.getInt(GgufKeys.arch("llama", GgufKeys.BLOCK_COUNT)));
            assertEquals(64, m.getInt(GgufKeys.arch("llama", GgufKeys.EMBEDDING_LENGTH)));
            assertEquals(8, m.getInt(GgufKeys.arch("llama", GgufKeys.ATTENTION_HEAD_COUNT)));
            assertEquals(4, m.getInt(GgufKeys.arch("llama", GgufKeys.ATTENTION_HEAD_COUNT_KV)));
            assertEquals(172, m.getInt(GgufKeys.arch("llama", GgufKeys.FEED_FORWARD_LENGTH)));
            assertEquals(2048, m.getInt(GgufKeys.arch("llama", GgufKeys.CONTEXT_LENGTH)));
            assertEquals(1e-5f, m.getFloat(GgufKeys.arch("llama", GgufKeys.ATTENTION_LAYERNORM_RMS_EPS)), 1e-9);
            assertEquals(48, f.tensors().size());
            GgufTensorInfo emb = f.tensor(TensorNames.global(TensorNames.TOKEN_EMBD));
            assertArrayEquals(new long[] {64, 512}, emb.shape());
            assertEquals(GgmlType.F32, emb.type());
            GgufTensorInfo down = f.tensor(TensorNames.block(4, TensorNames.FFN_DOWN));
            assertArrayEquals(new long[] {172, 64}, down.shape());
            assertEquals(172, down.rowLength());
            assertEquals(64, down.rowCount());
            List<String> tokens = m.getStringArray(GgufKeys.TOKENIZER_LIST);
            assertEquals(512, tokens.size());
            assertEquals(GgufValueType.STRING, m.arrayElementType(GgufKeys.TOKENIZER_LIST));
            assertEquals(512, m.getFloatArray(GgufKeys.TOKENIZER_SCORES).length);
            assertEquals(512, m.getIntArray(GgufKeys.TOKENIZER_TOKEN_TYPE).length);
        }
    }

    @Test
    void tinyRandomModels_metadataMatchesSources() throws IOException {
        Map<String, Integer> kvHeads = Map.of("llama", 2, "qwen2", 2, "qwen3", 2, "qwen3moe", 2, "phi3", 4, "gemma3", 1);
        for (Path p : TestModels.allGgufFiles()) {
            String name = p.getFileName().toString();
            if (!name.startsWith("tiny-")) {
                continue;
            }
            try (GgufFile f = GgufFile.open(p)) {
                GgufMetadata m = f.metadata();
                String arch = m.getString(GgufKeys.GENERAL_ARCHITECTURE);
                assertTrue(name.startsWith("tiny-" + arch + "-random"), name + " has arch " + arch);
                assertEquals(2, m.getInt(GgufKeys.arch(arch, GgufKeys.BLOCK_COUNT)), name);
                assertEquals(256, m.getInt(GgufKeys.arch(arch, GgufKeys.EMBEDDING_LENGTH)), name);
                assertEquals(4, m.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT)), name);
                assertEquals(kvHeads.get(arch), m.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT_KV)), name);
                assertEquals(512, m.getInt(GgufKeys.arch(arch, GgufKeys.CONTEXT_LENGTH)), name);
                assertEquals(512, m.getStringArray(GgufKeys.TOKENIZER_LIST).size(), name);
                assertEquals(1, m.getInt(GgufKeys.TOKENIZER_BOS_ID), name);
                assertEquals(2, m.getInt(GgufKeys.TOKENIZER_EOS_ID), name);
                assertEquals(0, m.getInt(GgufKeys.TOKENIZER_UNK_ID), name);
                assertTrue(m.getBool(GgufKeys.TOKENIZER_ADD_BOS), name);
                switch (arch) {
                    case "qwen3moe" -> {
                        assertEquals(4, m.getInt(GgufKeys.arch(arch, GgufKeys.EXPERT_COUNT)));
                        assertEquals(2, m.getInt(GgufKeys.arch(arch, GgufKeys.EXPERT_USED_COUNT)));
                        assertEquals(256, m.getInt(GgufKeys.arch(arch, GgufKeys.EXPERT_FEED_FORWARD_LENGTH)));
                        assertEquals(3, f.tensor(TensorNames.block(0, TensorNames.FFN_GATE_EXP)).dims());
                    }
                    case "gemma3" -> {
                        assertEquals(16, m.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_SLIDING_WINDOW)));
                        assertFalse(f.findTensor(TensorNames.global(TensorNames.OUTPUT)).isPresent(), "tied output");
                    }
                    case "phi3" -> {
                        assertEquals(512, m.getInt(GgufKeys.arch(arch, GgufKeys.ROPE_SCALING_ORIG_CTX_LEN)));
                        assertArrayEquals(new long[] {256, 768}, f.tensor(TensorNames.block(0, TensorNames.ATTN_QKV)).shape());
                    }
                    case "qwen2" -> assertTrue(f.findTensor(TensorNames.block(1, TensorNames.ATTN_Q, TensorNames.BIAS)).isPresent());
                    default -> { }
                }
            }
        }
    }

    @Test
    void vocabFiles_haveTokenListsButNoTensors() throws IOException {
        Path vocab = TestModels.testdata().resolve("vocab");
        record Expect(String file, int tokens, int merges) {}
        for (Expect e : List.of(new Expect("ggml-vocab-llama-spm.gguf", 32000, -1), new Expect("ggml-vocab-phi-3.gguf", 32064, -1),
                new Expect("ggml-vocab-gpt-2.gguf", 50257, 50000), new Expect("ggml-vocab-deepseek-coder.gguf", 32256, 31757))) {
            try (GgufFile f = GgufFile.open(vocab.resolve(e.file()))) {
                assertEquals(0, f.tensors().size(), e.file());
                assertEquals(e.tokens(), f.metadata().getStringArray(GgufKeys.TOKENIZER_LIST).size(), e.file());
                if (e.merges() >= 0) {
                    assertEquals(e.merges(), f.metadata().getStringArray(GgufKeys.TOKENIZER_MERGES).size(), e.file());
                }
            }
        }
        try (GgufFile f = GgufFile.open(vocab.resolve("ggml-vocab-phi-3.gguf"))) {
            assertEquals(32000, f.metadata().getInt(GgufKeys.TOKENIZER_EOS_ID));
            assertEquals("<|endoftext|>", f.metadata().getStringArray(GgufKeys.TOKENIZER_LIST).get(32000));
            assertTrue(f.metadata().has(GgufKeys.TOKENIZER_CHAT_TEMPLATE));
        }
    }

    @Test
    void tensorData_isTheFileBytesAtDataOffsetPlusOffset() throws IOException {
        Path p = TestModels.testdata().resolve("stories260K-Q8_0.gguf");
        byte[] whole = Files.readAllBytes(p);
        try (GgufFile f = GgufFile.open(p)) {
            for (GgufTensorInfo t : f.tensors()) {
                byte[] got = f.data(t).toArray(ValueLayout.JAVA_BYTE);
                int start = (int) (f.dataOffset() + t.offset());
                assertArrayEquals(java.util.Arrays.copyOfRange(whole, start, start + got.length), got, t.name());
            }
            assertEquals(whole.length, f.segment().byteSize());
        }
    }

    @Test
    void accessors_missingKeyOrWrongTypeNameTheKeyAndTypes() throws IOException {
        try (GgufFile f = GgufFile.open(TestModels.dir().resolve("stories260K.gguf"))) {
            GgufMetadata m = f.metadata();
            String bos = GgufKeys.TOKENIZER_BOS_ID;
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.getString(bos));
            assertEquals("key " + bos + " is " + m.type(bos) + ", asked for STRING", e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> m.getLong("no.such.key"));
            assertTrue(e.getMessage().contains("no.such.key"));
            assertEquals(7, m.getInt("no.such.key", 7));
            assertEquals("dflt", m.getString("no.such.key", "dflt"));
            assertThrows(IllegalArgumentException.class, () -> m.getInt(GgufKeys.GENERAL_ARCHITECTURE, 3),
                    "a present key of the wrong type is an error even with a default");
            assertThrows(IllegalArgumentException.class, () -> m.getIntArray(GgufKeys.TOKENIZER_LIST));
            assertThrows(IllegalArgumentException.class, () -> m.getStringArray(GgufKeys.TOKENIZER_SCORES));
            e = assertThrows(IllegalArgumentException.class, () -> f.tensor("nope.weight"));
            assertEquals("missing tensor nope.weight", e.getMessage());
            assertTrue(f.findTensor("nope.weight").isEmpty());
            assertEquals(GgufKeys.TOKENIZER_LIST, m.keys().iterator().next(), "keys keep file order (this file starts with the vocab)");
        }
    }

    @Test
    void close_unmapsTheFile() throws IOException {
        GgufFile f = GgufFile.open(TestModels.dir().resolve("stories260K.gguf"));
        MemorySegment d = f.data(f.tensors().getFirst());
        f.close();
        assertThrows(IllegalStateException.class, () -> d.get(ValueLayout.JAVA_BYTE, 0));
        f.close(); // idempotent
    }

    static Map<String, Integer> typeCounts(GgufFile f) {
        Map<String, Integer> m = new TreeMap<>();
        for (GgufTensorInfo t : f.tensors()) {
            m.merge(t.type().name(), 1, Integer::sum);
        }
        return m;
    }

    static String sha256(Path p) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        try (InputStream in = new DigestInputStream(Files.newInputStream(p), md)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
