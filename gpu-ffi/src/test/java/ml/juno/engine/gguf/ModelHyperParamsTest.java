package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelHyperParamsTest {

    @TempDir
    Path tmp;

    private static ModelHyperParams read(Path p) throws IOException {
        try (GgufFile f = GgufFile.open(p)) {
            return ModelHyperParams.from(f.metadata());
        }
    }

    @Test
    void stories260K_matchesSourcesDescription_withLlamaCppDefaultsForAbsentKeys() throws IOException {
        ModelHyperParams hp = read(TestModels.dir().resolve("stories260K.gguf"));
        assertEquals("llama", hp.arch());
        assertEquals(5, hp.blockCount());
        assertEquals(64, hp.embeddingLength());
        assertEquals(8, hp.headCount());
        assertEquals(4, hp.headCountKv());
        assertEquals(8, hp.keyLength(), "head_dim = 64 / 8");
        assertEquals(8, hp.valueLength());
        assertEquals(172, hp.feedForwardLength());
        assertEquals(2048, hp.contextLength());
        assertEquals(512, hp.vocabSize(), "from the token list");
        assertEquals(1e-5f, hp.rmsEps());
        assertEquals(10000f, hp.rope().freqBase(), "rope base 10000 (default)");
        assertEquals(8, hp.rope().dimensionCount());
        assertEquals(new ModelHyperParams.RopeScaling("linear", 1f, 2048), hp.rope().scaling());
        assertEquals(new ModelHyperParams.Experts(0, 0, 0), hp.experts());
        assertEquals(0, hp.attention().slidingWindow());
    }

    @Test
    void tinyRandomArchitectures_readTheirSpecialKeys() throws IOException {
        Path dir = TestModels.testdata().resolve("tiny-random");
        ModelHyperParams qwen2 = read(dir.resolve("tiny-qwen2-random-Q8_0.gguf"));
        assertEquals(1e6f, qwen2.rope().freqBase());
        assertEquals(1e-6f, qwen2.rmsEps());
        assertEquals(2, qwen2.headCountKv());
        assertEquals(64, qwen2.keyLength());

        ModelHyperParams moe = read(dir.resolve("tiny-qwen3moe-random-Q8_0.gguf"));
        assertEquals(new ModelHyperParams.Experts(4, 2, 256), moe.experts());
        assertEquals(64, moe.keyLength());

        ModelHyperParams phi3 = read(dir.resolve("tiny-phi3-random-F16.gguf"));
        assertEquals(4, phi3.headCountKv(), "MHA");
        assertEquals(512, phi3.rope().scaling().originalContextLength());
        assertEquals(512, phi3.feedForwardLength());

        ModelHyperParams gemma3 = read(dir.resolve("tiny-gemma3-random-F16.gguf"));
        assertEquals(16, gemma3.attention().slidingWindow());
        assertEquals(1, gemma3.headCountKv(), "MQA");
        assertEquals(256, gemma3.embeddingLength());
        assertEquals(2, gemma3.blockCount());
    }

    @Test
    void missingRequiredKeyOrInconsistentHeads_isRefusedNamingTheKey() throws IOException {
        Path p = tmp.resolve("m.gguf");
        new GgufWriter().putString(GgufKeys.GENERAL_ARCHITECTURE, "llama").putUInt32("llama.embedding_length", 64)
                .putUInt32("llama.block_count", 2).write(p);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> read(p));
        assertTrue(e.getMessage().contains("llama.context_length"), e.getMessage());

        new GgufWriter().putString(GgufKeys.GENERAL_ARCHITECTURE, "llama").putUInt32("llama.context_length", 128)
                .putUInt32("llama.embedding_length", 64).putUInt32("llama.block_count", 2)
                .putUInt32("llama.attention.head_count", 8).putUInt32("llama.attention.head_count_kv", 3).write(p);
        GgufFormatException kv = assertThrows(GgufFormatException.class, () -> read(p)); // refused as the file opens (GgufSanity)
        assertTrue(kv.getMessage().contains("llama.attention.head_count_kv: value 3 does not divide"), kv.getMessage());

        new GgufWriter().putString(GgufKeys.GENERAL_ARCHITECTURE, "llama").putUInt32("llama.context_length", 128)
                .putUInt32("llama.embedding_length", 64).putUInt32("llama.block_count", 2)
                .putString("llama.attention.head_count", "eight").write(p);
        GgufFormatException type = assertThrows(GgufFormatException.class, () -> read(p));
        assertTrue(type.getMessage().contains("llama.attention.head_count: is STRING, not an integer"), type.getMessage());
    }

    @Test
    void perLayerArraysAndExplicitKeys_areHonoured() throws IOException {
        Path p = tmp.resolve("m.gguf");
        new GgufWriter().putString(GgufKeys.GENERAL_ARCHITECTURE, "x").putUInt32("x.context_length", 4096)
                .putUInt32("x.embedding_length", 512).putUInt32("x.block_count", 3)
                .putInts("x.feed_forward_length", new int[] {1024, 2048, 1536})
                .putInts("x.attention.head_count", new int[] {8, 8, 8})
                .putUInt32("x.attention.key_length", 128).putUInt32("x.attention.value_length", 96)
                .putUInt32("x.rope.dimension_count", 32).putString("x.rope.scaling.type", "yarn")
                .putFloat32("x.rope.scaling.factor", 4f).putUInt32("x.rope.scaling.original_context_length", 1024)
                .putUInt32("x.vocab_size", 1000).putFloat32("x.attention.layer_norm_epsilon", 1e-6f).write(p);
        ModelHyperParams hp = read(p);
        assertEquals(2048, hp.feedForwardLength(), "largest per-layer entry");
        assertEquals(8, hp.headCountKv(), "defaults to head_count");
        assertEquals(128, hp.keyLength());
        assertEquals(96, hp.valueLength());
        assertEquals(32, hp.rope().dimensionCount());
        assertEquals(new ModelHyperParams.RopeScaling("yarn", 4f, 1024), hp.rope().scaling());
        assertEquals(1000, hp.vocabSize());
        assertEquals(1e-6f, hp.attention().layerNormEps());
    }
}
