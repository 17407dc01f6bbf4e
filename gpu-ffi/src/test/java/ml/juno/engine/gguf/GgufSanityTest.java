package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Values that parse but cannot be right are refused when the file opens, naming the key: special-token ids past the
 * vocabulary, a context of 10^9 tokens, head counts that do not divide, NaN or negative RoPE and norm values.
 */
class GgufSanityTest {

    @TempDir
    Path dir;

    /** A small valid llama-like header with a 4-token vocabulary, changed by {@code edit}. */
    private GgufFile open(Consumer<GgufWriter> edit) throws IOException {
        GgufWriter w = new GgufWriter()
                .putString(GgufKeys.GENERAL_ARCHITECTURE, "llama")
                .putUInt32("llama.context_length", 2048)
                .putUInt32("llama.embedding_length", 64)
                .putUInt32("llama.block_count", 2)
                .putUInt32("llama.feed_forward_length", 128)
                .putUInt32("llama.attention.head_count", 8)
                .putUInt32("llama.attention.head_count_kv", 4)
                .putFloat32("llama.rope.freq_base", 10000f)
                .putFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
                .putStrings(GgufKeys.TOKENIZER_LIST, List.of("<unk>", "<s>", "</s>", "a"))
                .putUInt32(GgufKeys.TOKENIZER_BOS_ID, 1)
                .putUInt32(GgufKeys.TOKENIZER_EOS_ID, 2);
        edit.accept(w);
        Path f = dir.resolve("m-" + System.nanoTime() + ".gguf");
        w.write(f);
        return GgufFile.open(f);
    }

    private void assertRefused(Consumer<GgufWriter> edit, String key, String problem) {
        GgufFormatException e = assertThrows(GgufFormatException.class, () -> open(edit).close(), key);
        assertEquals(key, e.field(), e.getMessage());
        assertTrue(e.getMessage().startsWith(key + ": ") && e.getMessage().contains(problem), e.getMessage());
    }

    @Test
    void aValidHeader_opens() throws IOException {
        try (GgufFile f = open(w -> { })) {
            assertEquals(2048, f.metadata().getInt("llama.context_length"));
        }
    }

    @Test
    void specialTokenIds_mustLieInsideTheVocabulary() {
        assertRefused(w -> w.putUInt32(GgufKeys.TOKENIZER_EOS_ID, 4), GgufKeys.TOKENIZER_EOS_ID,
                "token id 4 is outside the vocabulary [0, 4)");
        assertRefused(w -> w.putUInt32(GgufKeys.TOKENIZER_PAD_ID, 0xFFFF_FFFEL), GgufKeys.TOKENIZER_PAD_ID, "token id 4294967294");
        assertRefused(w -> w.putInt32(GgufKeys.TOKENIZER_UNK_ID, -2), GgufKeys.TOKENIZER_UNK_ID, "token id -2");
        assertRefused(w -> w.putUInt64(GgufKeys.TOKENIZER_SEP_ID, 0xFFFF_FFFFL), GgufKeys.TOKENIZER_SEP_ID, "token id 4294967295");
        assertRefused(w -> w.putString(GgufKeys.TOKENIZER_BOS_ID, "1"), GgufKeys.TOKENIZER_BOS_ID, "not an integer");
    }

    @Test
    void llamaCppsNoneToken_isAccepted() throws IOException {
        try (GgufFile f = open(w -> w.putUInt32(GgufKeys.TOKENIZER_PAD_ID, 0xFFFF_FFFFL).putInt32(GgufKeys.TOKENIZER_UNK_ID, -1))) {
            assertEquals(0xFFFF_FFFFL, f.metadata().getLong(GgufKeys.TOKENIZER_PAD_ID));
        }
    }

    @Test
    void hyperParameters_outsideSaneBounds_areRefusedByKey() {
        assertRefused(w -> w.putUInt32("llama.context_length", 1_000_000_000L), "llama.context_length", "value 1000000000 is outside [1, 16777216]");
        assertRefused(w -> w.putUInt32("llama.context_length", 0), "llama.context_length", "outside");
        assertRefused(w -> w.putUInt64("llama.embedding_length", 1L << 40), "llama.embedding_length", "outside");
        assertRefused(w -> w.putUInt32("llama.block_count", 100_000), "llama.block_count", "outside");
        assertRefused(w -> w.putUInt32("llama.attention.head_count", 1 << 20), "llama.attention.head_count", "outside");
        assertRefused(w -> w.putUInt32("llama.attention.head_count_kv", 3), "llama.attention.head_count_kv", "does not divide");
        assertRefused(w -> w.putUInt32("llama.attention.head_count_kv", 16), "llama.attention.head_count_kv", "does not divide");
        assertRefused(w -> w.putFloat32("llama.rope.freq_base", Float.NaN), "llama.rope.freq_base", "outside");
        assertRefused(w -> w.putFloat32("llama.rope.freq_base", -1f), "llama.rope.freq_base", "outside");
        assertRefused(w -> w.putFloat32("llama.attention.layer_norm_rms_epsilon", 0f), "llama.attention.layer_norm_rms_epsilon", "outside");
        assertRefused(w -> w.putFloat32("llama.rope.scaling.factor", Float.POSITIVE_INFINITY), "llama.rope.scaling.factor", "outside");
        assertRefused(w -> w.putInts("llama.attention.head_count", new int[] {8, 8, 1 << 20}), "llama.attention.head_count[2]", "outside");
        assertRefused(w -> w.putUInt32("llama.expert_count", 4).putUInt32("llama.expert_used_count", 8), "llama.expert_used_count", "exceeds");
    }

    @Test
    void everyShippedModel_passes() throws IOException {
        try (var files = Files.walk(TestModels.testdata().getParent())) {
            for (Path p : files.filter(p -> p.toString().endsWith(".gguf")).toList()) {
                try (GgufFile f = GgufFile.open(p)) {
                    assertTrue(f.metadata().size() > 0, p.toString());
                }
            }
        }
    }
}
