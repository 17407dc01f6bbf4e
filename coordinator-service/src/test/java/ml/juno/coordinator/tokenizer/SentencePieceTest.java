package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** SentencePiece BPE on small handmade vocabularies, where the expected ids can be worked out by hand. */
class SentencePieceTest {
    /** Tokens 0..2 special, then the given pieces with their scores; byte tokens optional. */
    private static Tokenizer vocab(boolean byteTokens, Object... pieceScore) {
        List<String> texts = new ArrayList<>(List.of("<unk>", "<s>", "</s>"));
        List<Float> scores = new ArrayList<>(List.of(0f, 0f, 0f));
        List<Integer> types = new ArrayList<>(List.of(2, 3, 3));
        if (byteTokens) {
            for (int b = 0; b < 256; b++) {
                texts.add(String.format("<0x%02X>", b));
                scores.add(0f);
                types.add(6);
            }
        }
        for (int i = 0; i < pieceScore.length; i += 2) {
            texts.add((String) pieceScore[i]);
            scores.add(((Number) pieceScore[i + 1]).floatValue());
            types.add(1);
        }
        float[] s = new float[scores.size()];
        int[] t = new int[types.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = scores.get(i);
            t[i] = types.get(i);
        }
        return Tokenizer.fromVocabulary(new Vocabulary(new Vocabulary.Kind(Vocabulary.Model.SPM, "default", "test"),
                new Vocabulary.TokenTable(texts, s, t), List.of(), new Vocabulary.SpecialIds(1, 2, 0, -1, -1),
                new Vocabulary.Flags(true, false, true)));
    }

    private static String[] pieces(Tokenizer tok, int[] ids) {
        String[] r = new String[ids.length];
        for (int i = 0; i < ids.length; i++) {
            r[i] = tok.tokenText(ids[i]);
        }
        return r;
    }

    @Test
    void merges_followScoreNotPosition() {
        // "abc": "bc" scores higher than "ab", so b+c merge first and "ab" never forms
        Tokenizer tok = vocab(true, "▁", -1, "a", -1, "b", -1, "c", -1, "ab", -2, "bc", -1.5, "▁a", -3);
        assertArrayEquals(new String[] {"▁a", "bc"}, pieces(tok, tok.encode("abc", false, false)));
        Tokenizer tok2 = vocab(true, "▁", -1, "a", -1, "b", -1, "c", -1, "ab", -1, "bc", -1.5, "▁ab", -1.2);
        assertArrayEquals(new String[] {"▁ab", "c"}, pieces(tok2, tok2.encode("abc", false, false)));
    }

    @Test
    void equalScores_mergeLeftmostFirst() {
        Tokenizer tok = vocab(true, "▁", -1, "a", -1, "aa", -1);
        // "▁aaa": ▁+a is not a token; (a,a) pairs at positions 1 and 2 tie: the left one wins
        assertArrayEquals(new String[] {"▁", "aa", "a"}, pieces(tok, tok.encode("aaa", false, false)));
    }

    @Test
    void spaces_becomeLowerOneEighthBlock_andTextGetsAPrefixSpace() {
        Tokenizer tok = vocab(true, "▁", -1, "▁a", -1, "▁b", -1, "a", -2, "b", -2);
        assertArrayEquals(new String[] {"▁a", "▁b"}, pieces(tok, tok.encode("a b", false, false)));
        assertArrayEquals(new String[] {"▁", "▁a"}, pieces(tok, tok.encode(" a", false, false)));
        assertEquals("a b", tok.decode(tok.encode("a b", true, false)));
    }

    @Test
    void unknownCharacters_fallBackToByteTokens() {
        Tokenizer tok = vocab(true, "▁", -1, "a", -1);
        // "é" = C3 A9 is not in the vocabulary
        assertArrayEquals(new String[] {"▁", "<0xC3>", "<0xA9>"}, pieces(tok, tok.encode("é", false, false)));
        assertEquals("é", tok.decode(tok.encode("é", false, false)));
    }

    @Test
    void withoutByteTokens_unknownCharactersBecomeUnk() {
        Tokenizer tok = vocab(false, "▁", -1, "a", -1);
        assertArrayEquals(new int[] {1, 3, 0, 0, 4}, tok.encode("éa", true, false));
    }

    @Test
    void addSpecial_addsBosOnly_andParseSpecialRecognisesControlText() {
        Tokenizer tok = vocab(true, "▁", -1, "a", -1, "▁a", -1, "<", -1, "s", -1, ">", -1, "/", -1);
        int a = tok.tokenId("▁a");
        assertArrayEquals(new int[] {1, a}, tok.encode("a", true, false));
        assertArrayEquals(new int[] {a}, tok.encode("a", false, false));
        assertArrayEquals(new int[] {}, tok.encode("", false, false));
        assertArrayEquals(new int[] {1}, tok.encode("", true, false));
        // parse_special: "</s>" becomes EOS and the text after it gets its own prefix space
        assertArrayEquals(new int[] {a, 2, a}, tok.encode("a</s>a", false, true));
        int[] plain = tok.encode("a</s>a", false, false);
        assertEquals(-1, java.util.Arrays.stream(plain).filter(i -> i == 2).findAny().orElse(-1));
        assertEquals("a</s>a", tok.decode(plain));
    }

    @Test
    void badVocabularies_areRejected() {
        assertThrows(IllegalArgumentException.class, () -> vocab(true, "a", -1, "a", -2));
        assertThrows(IllegalArgumentException.class, () -> new Vocabulary(
                new Vocabulary.Kind(Vocabulary.Model.SPM, "default", ""),
                new Vocabulary.TokenTable(List.of("a"), null, null), List.of(),
                new Vocabulary.SpecialIds(5, -1, -1, -1, -1), new Vocabulary.Flags(true, false, true)));
    }
}
