package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Inputs a public endpoint will eventually receive. The time bounds are generous (shared CI machines);
 * they only catch quadratic blow-ups and hangs, which take minutes at these sizes.
 */
class HostileInputTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-deepseek-coder.gguf"})
    void hundredThousandRepeatedChars_encodeInSubQuadraticTime(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        for (String c : new String[] {"a", " ", "🦙", "<"}) {
            String s = c.repeat(100_000);
            int[] ids = assertTimeoutPreemptively(LIMIT, () -> tok.encode(s, false, false), vocab + " '" + c + "'");
            // at most one token per byte, plus SentencePiece's prefix space
            assertTrue(ids.length > 0 && ids.length <= s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 1,
                    vocab + " '" + c + "': " + ids.length + " tokens");
            assertEquals(s, tok.decode(ids), "round trip of 100k '" + c + "'");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"})
    void tenMegabytesOfText_encodes(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        StringBuilder sb = new StringBuilder(10_500_000);
        String para = "The quick brown fox jumps over the lazy dog; Ünïcödé, 数字 12345 and <|im_end|> </s>.\n";
        while (sb.length() < 10_000_000) {
            sb.append(para);
        }
        String big = sb.toString();
        int[] ids = assertTimeoutPreemptively(LIMIT, () -> tok.encode(big, true, true));
        assertTrue(ids.length > 1_000_000, "tokens: " + ids.length);
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-deepseek-coder.gguf"})
    void loneSurrogates_areEncodedAsReplacementCharacter(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        String broken = "a\uD800b\uDC00c\uD83D";
        int[] ids = tok.encode(broken, false, false);
        assertArrayEquals(tok.encode("a\uFFFDb\uFFFDc\uFFFD", false, false), ids);
        assertEquals("a\uFFFDb\uFFFDc\uFFFD", tok.decode(ids));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-deepseek-coder.gguf"})
    void controlCharacters_roundTrip(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        StringBuilder sb = new StringBuilder();
        for (int c = 0; c < 0x20; c++) {
            sb.append((char) c).append('x');
        }
        sb.append('\u007F').append('\u0085').append('\u200B').append('\uFEFF').append('\u202E');
        String s = sb.toString();
        assertEquals(s, tok.decode(tok.encode(s, false, false)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf"})
    void nullText_isRejectedClearly(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tok.encode(null, true, false));
        assertTrue(e.getMessage().contains("null"));
        assertThrows(IllegalArgumentException.class, () -> tok.decode(new int[] {tok.size()}));
    }
}
