package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * llama.cpp's own tokenizer test vectors ({@code test-tokenizer-0}): every string of the {@code .inp}
 * file must tokenize (no BOS, special text not parsed) to exactly the ids on the same line of the
 * {@code .out} file, and decode back to itself.
 */
class LlamaCppTestVectorsTest {

    record Case(String text, int[] ids) {
    }

    static List<Case> read(String vocab) throws IOException {
        String raw = Files.readString(TestModels.vocabDir().resolve(vocab + ".inp"), StandardCharsets.UTF_8);
        List<String> outs = Files.readAllLines(TestModels.vocabDir().resolve(vocab + ".out"), StandardCharsets.UTF_8);
        String sep = "\n__ggml_vocab_test__\n";
        List<String> inputs = new ArrayList<>();
        int pos = 0;
        while (pos < raw.length()) {
            int next = raw.indexOf(sep, pos);
            if (next < 0) {
                inputs.add(raw.substring(pos));
                break;
            }
            inputs.add(raw.substring(pos, next));
            pos = next + sep.length();
        }
        assertEquals(outs.size(), inputs.size(), "input and output files list different numbers of tests");
        List<Case> cases = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            String o = outs.get(i).strip();
            int[] ids = o.isEmpty() ? new int[0] : Arrays.stream(o.split(" ")).mapToInt(Integer::parseInt).toArray();
            cases.add(new Case(inputs.get(i), ids));
        }
        return cases;
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf",
            "ggml-vocab-deepseek-coder.gguf"})
    void encode_matchesLlamaCppIdsForEveryTestString(String vocab) throws IOException {
        Tokenizer tok = TestModels.tokenizer(vocab);
        List<Case> cases = read(vocab);
        assertTrue(cases.size() >= 40, "expected the full llama.cpp test set, got " + cases.size());
        List<String> failures = new ArrayList<>();
        for (Case c : cases) {
            int[] got = tok.encode(c.text(), false, false);
            if (!Arrays.equals(c.ids(), got)) {
                failures.add("'" + c.text() + "': expected " + Arrays.toString(c.ids()) + " got " + Arrays.toString(got));
            }
        }
        assertEquals(List.of(), failures, vocab);
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"})
    void encode_fromManyThreadsAtOnce_givesTheSameIds(String vocab) throws Exception {
        Tokenizer tok = TestModels.tokenizer(vocab);
        List<Case> cases = read(vocab);
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(4)) {
            List<java.util.concurrent.Future<Boolean>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                results.add(pool.submit(() -> {
                    for (int round = 0; round < 20; round++) {
                        for (Case c : cases) {
                            if (!Arrays.equals(c.ids(), tok.encode(c.text(), false, false))) {
                                return false;
                            }
                        }
                    }
                    return true;
                }));
            }
            for (var r : results) {
                assertTrue(r.get(), vocab);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf",
            "ggml-vocab-deepseek-coder.gguf"})
    void decode_ofEncode_returnsTheOriginalText(String vocab) throws IOException {
        Tokenizer tok = TestModels.tokenizer(vocab);
        for (Case c : read(vocab)) {
            assertEquals(c.text(), tok.decode(tok.encode(c.text(), false, false)), vocab);
            assertEquals(c.text(), tok.decode(tok.encode(c.text(), true, false)), vocab + " with BOS");
        }
    }
}
