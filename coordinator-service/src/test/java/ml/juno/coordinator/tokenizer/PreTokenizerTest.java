package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Word splits of the pre-tokenizer expressions, worked out from the regular expressions by hand. */
class PreTokenizerTest {
    private static List<String> split(String pre, String text) {
        int[] cps = text.codePoints().toArray();
        IntList lens = PreTokenizer.forName(pre).split(cps, cps.length);
        List<String> words = new ArrayList<>();
        int at = 0;
        for (int i = 0; i < lens.size(); i++) {
            words.add(new String(cps, at, lens.get(i)));
            at += lens.get(i);
        }
        return words;
    }

    @Test
    void gpt2_splitsContractionsLettersNumbersAndTrailingSpaces() {
        // "'a" is no contraction, so the apostrophe stands alone; trailing " \n" is one whitespace run
        assertEquals(List.of("Hello", ",", " y", "'", "all", "!", "  ", " How", " 123", "abc", " \n"),
                split("gpt-2", "Hello, y'all!   How 123abc \n"));
    }

    @Test
    void llama3_groupsDigitsByThreeAndKeepsNewlinesTogether() {
        assertEquals(List.of("123", "456", "7", " x", "'S", ".\n\n", "  ", " y"),
                split("llama-bpe", "1234567 x'S.\n\n   y"));
    }

    @Test
    void qwen2_splitsEveryDigit() {
        assertEquals(List.of("1", "2", "3", " abc"), split("qwen2", "123 abc"));
    }

    @Test
    void deepseekCoder_splitsNewlinesPunctuationAndDigits() {
        assertEquals(List.of("a", "\n", "b", " (", "1", "2", "测试"), split("deepseek-coder", "a\nb (12测试"));
    }

    @Test
    void collapse_rewritesCategoriesLikeLlamaCpp() {
        assertEquals("[\u00D1" + "0-9]+", PreTokenizer.collapse("\\p{N}+"));
        assertEquals("[^\\s\u00D2A-Za-z]", PreTokenizer.collapse("[^\\s\\p{L}]"));
    }
}
