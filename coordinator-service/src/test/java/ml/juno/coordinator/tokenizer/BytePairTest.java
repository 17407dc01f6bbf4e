package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Byte-level BPE on a small handmade vocabulary. */
class BytePairTest {
    /** All 256 byte-level characters, then the merge results, then an end-of-text control token. */
    private static Tokenizer vocab(String pre, List<String> merges) {
        List<String> texts = new ArrayList<>();
        for (int b = 0; b < 256; b++) {
            texts.add(String.valueOf(ByteLevel.encode(b)));
        }
        for (String m : merges) {
            texts.add(m.replace(" ", ""));
        }
        texts.add("<|endoftext|>");
        int[] types = new int[texts.size()];
        java.util.Arrays.fill(types, 1);
        types[texts.size() - 1] = 3;
        int eot = texts.size() - 1;
        return Tokenizer.fromVocabulary(new Vocabulary(new Vocabulary.Kind(Vocabulary.Model.BPE, pre, "test"),
                new Vocabulary.TokenTable(texts, null, types), merges, new Vocabulary.SpecialIds(eot, eot, -1, -1, -1),
                new Vocabulary.Flags(false, false, false)));
    }

    private static String[] pieces(Tokenizer tok, int[] ids) {
        String[] r = new String[ids.length];
        for (int i = 0; i < ids.length; i++) {
            r[i] = tok.tokenText(ids[i]);
        }
        return r;
    }

    @Test
    void merges_applyInRankOrder() {
        // ranks: "b c" before "a b", so "abc" → a + bc even though "ab" is leftmost
        Tokenizer tok = vocab("gpt-2", List.of("b c", "a b", "Ġ a"));
        assertArrayEquals(new String[] {"a", "bc"}, pieces(tok, tok.encode("abc", false, false)));
        Tokenizer tok2 = vocab("gpt-2", List.of("a b", "b c", "Ġ a"));
        assertArrayEquals(new String[] {"ab", "c"}, pieces(tok2, tok2.encode("abc", false, false)));
    }

    @Test
    void spacesAndBytes_useGpt2ByteMapping() {
        Tokenizer tok = vocab("gpt-2", List.of("Ġ a", "Ġa b"));
        assertArrayEquals(new String[] {"Ġab"}, pieces(tok, tok.encode(" ab", false, false)));
        // "é" is two bytes, each its own byte-level character
        assertArrayEquals(new String[] {"Ã", "©"}, pieces(tok, tok.encode("é", false, false)));
        assertEquals("é ab", tok.decode(tok.encode("é ab", false, false)));
    }

    @Test
    void preTokenizer_keepsWordsApart() {
        // "a" + "Ġ" never merges across the word boundary the GPT-2 expression draws before " b"
        Tokenizer tok = vocab("gpt-2", List.of("a Ġ", "Ġ b"));
        assertArrayEquals(new String[] {"a", "Ġb"}, pieces(tok, tok.encode("a b", false, false)));
    }

    @Test
    void specialText_isParsedOnlyWhenAsked() {
        Tokenizer tok = vocab("gpt-2", List.of("a b"));
        int eot = tok.tokenId("<|endoftext|>");
        assertArrayEquals(new int[] {tok.tokenId("ab"), eot}, tok.encode("ab<|endoftext|>", false, true));
        int[] plain = tok.encode("ab<|endoftext|>", false, false);
        assertTrue(java.util.Arrays.stream(plain).noneMatch(i -> i == eot));
        assertEquals("ab<|endoftext|>", tok.decode(plain));
        assertTrue(tok.isEndOfGeneration(eot));
    }

    @Test
    void unknownPreTokenizer_isRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> vocab("my-fancy-pre", List.of("a b")));
        assertTrue(e.getMessage().contains("my-fancy-pre"), e.getMessage());
    }
}
