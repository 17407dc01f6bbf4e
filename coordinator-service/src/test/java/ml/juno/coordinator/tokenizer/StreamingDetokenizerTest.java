package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StreamingDetokenizerTest {
    private static final String TEXT = " this is 🦙.cpp, нещо на Български, 我想在apple工作 😶‍🌫️ Cửa Việt ✅";

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-deepseek-coder.gguf"})
    void tokenByToken_neverEmitsReplacementCharAndReassemblesText(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        int[] ids = tok.encode(TEXT, false, false);
        StreamingDetokenizer d = tok.streamingDetokenizer(false);
        StringBuilder sb = new StringBuilder();
        boolean heldBack = false;
        for (int id : ids) {
            String delta = d.decode(id);
            assertFalse(delta.contains("\uFFFD"), vocab + ": delta with U+FFFD after token " + id);
            heldBack |= d.pendingBytes() > 0;
            sb.append(delta);
        }
        sb.append(d.flush());
        assertTrue(heldBack, vocab + ": some token should have ended inside a character");
        // SentencePiece prepends a space to the text; streaming keeps every byte the tokens carry
        String expected = tok.vocabulary().flags().addSpacePrefix() ? " " + TEXT : TEXT;
        assertEquals(expected, sb.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"})
    void byteTokens_areHeldUntilTheCharacterCompletes(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        int[] ids = tok.encode("🦙", false, false); // not a single token in either vocabulary
        assertTrue(ids.length > 1);
        StreamingDetokenizer d = tok.streamingDetokenizer(false);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < ids.length - 1; i++) {
            sb.append(d.decode(ids[i]));
        }
        assertFalse(sb.toString().contains("🦙"));
        assertTrue(d.pendingBytes() > 0);
        sb.append(d.decode(ids[ids.length - 1]));
        assertTrue(sb.toString().endsWith("🦙"));
        assertEquals(0, d.pendingBytes());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf"})
    void incompleteCharacterAtEnd_isFlushedAsReplacement(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        int first = tok.tokenId("<0xF0>");
        StreamingDetokenizer d = tok.streamingDetokenizer(false);
        assertEquals("", d.decode(first));
        assertEquals("\uFFFD", d.flush());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-phi-3.gguf"})
    void controlTokens_renderOnlyWhenAsked(String vocab) {
        Tokenizer tok = TestModels.tokenizer(vocab);
        int end = tok.tokenId("<|end|>");
        assertEquals("", tok.streamingDetokenizer(false).decode(end));
        assertEquals("<|end|>", tok.streamingDetokenizer(true).decode(end));
    }
}
