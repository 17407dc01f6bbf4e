package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

    @ParameterizedTest
    @ValueSource(strings = {"default", "gpt-2", "llama-bpe", "llama3", "qwen2", "deepseek-llm", "deepseek-coder",
            "falcon", "starcoder", "smaug-bpe", "deepseek-r1-qwen"})
    void everySupportedPreTokenizer_coversTheTextExactly(String pre) {
        String text = "Hello, y'all!  How are you 😁 ?我想在apple工作1314151天～\n\n\t 3.14 Ünïcödé   \u3000x\r\n";
        List<String> words = split(pre, text);
        assertEquals(text, String.join("", words), pre);
        assertTrue(words.size() > 10, pre + " split into " + words);
        assertTrue(words.stream().noneMatch(String::isEmpty), pre);
    }

    @Test
    void deepseekLlm_isolatesNewlinesThenTrailingWhitespace() {
        // "[\r\n]" runs first, so the final "\s+$" sees "a b  " and takes the two trailing spaces
        assertEquals(List.of("a", " b", "  ", "\n"), split("deepseek-llm", "a b  \n"));
    }

    @Test
    void collapse_rewritesCategoriesLikeLlamaCpp() {
        assertEquals("[\u00D1" + "0-9]+", PreTokenizer.collapse("\\p{N}+"));
        assertEquals("[^\\s\u00D2A-Za-z]", PreTokenizer.collapse("[^\\s\\p{L}]"));
    }
}
