package ml.juno.coordinator.tokenizer;

import java.nio.file.Path;
import ml.juno.engine.gguf.GgufFile;

/**
 * Hand-run encode benchmark (not a test): tokenizes ~2,048 tokens of English repeatedly after warm-up
 * and prints the best and median time per encode. Usage:
 * {@code java -cp <test classpath> ml.juno.coordinator.tokenizer.TokenizerBenchmark models/testdata/vocab/ggml-vocab-llama-spm.gguf ...}
 */
public final class TokenizerBenchmark {
    private static final String PARAGRAPH = "The quick brown fox jumps over the lazy dog while the children watched "
            + "from the window. Once upon a time, in a small village by the sea, there lived an old fisherman who told "
            + "stories every evening. Scientists announced on Tuesday that the new telescope had captured images of "
            + "galaxies formed billions of years ago, and they expect many more discoveries in the coming months. ";

    private TokenizerBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        for (String file : args) {
            Tokenizer tok;
            try (GgufFile f = GgufFile.open(Path.of(file))) {
                tok = Tokenizer.fromGguf(f);
            }
            StringBuilder sb = new StringBuilder();
            while (tok.encode(sb.toString(), false, false).length < 2048) {
                sb.append(PARAGRAPH);
            }
            // cut back to the first 2,048 tokens' worth of text
            int[] ids = tok.encode(sb.toString(), false, false);
            int[] first = java.util.Arrays.copyOf(ids, 2048);
            String text = tok.decode(first);
            int n = tok.encode(text, false, false).length;
            for (int i = 0; i < 500; i++) {
                tok.encode(text, false, false);
            }
            int reps = 300;
            long[] t = new long[reps];
            for (int r = 0; r < reps; r++) {
                long s = System.nanoTime();
                tok.encode(text, false, false);
                t[r] = System.nanoTime() - s;
            }
            java.util.Arrays.sort(t);
            System.out.printf("%s: %d tokens (%d chars): best %.3f ms, median %.3f ms, p90 %.3f ms%n",
                    Path.of(file).getFileName(), n, text.length(), t[0] / 1e6, t[reps / 2] / 1e6, t[reps * 9 / 10] / 1e6);
        }
    }
}
