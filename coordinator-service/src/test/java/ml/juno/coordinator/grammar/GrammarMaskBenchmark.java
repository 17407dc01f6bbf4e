package ml.juno.coordinator.grammar;

import java.nio.file.Path;
import java.util.Arrays;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;

/**
 * Hand-run mask benchmark (not a test): the token mask's cost at every token of a JSON document valid against a
 * schema, the document tokenized by the model's own tokenizer, so the states are those constrained decoding passes
 * through. Prints the mean, median and worst microseconds per mask and the trie's size. Usage:
 * {@code java -cp <test classpath> ml.juno.coordinator.grammar.GrammarMaskBenchmark models/testdata/vocab/ggml-vocab-llama-spm.gguf ...}
 */
public final class GrammarMaskBenchmark {
    static final String SCHEMA = """
            {"type":"object","additionalProperties":false,"required":["title","rating","genre","characters"],
             "properties":{"title":{"type":"string","maxLength":40},"rating":{"type":"integer"},
               "genre":{"enum":["fairy tale","fable","adventure"]},
               "characters":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["name","kind"],
                 "properties":{"name":{"type":"string"},"kind":{"enum":["girl","boy","dog"]}}}}}}
            """;
    static final String DOC = "{\"title\":\"The little dog and the big red ball\",\"rating\":4,\"genre\":\"fairy tale\","
            + "\"characters\":[{\"name\":\"Lily\",\"kind\":\"girl\"},{\"name\":\"Max, who liked to run in the park\",\"kind\":\"dog\"}]}";

    private GrammarMaskBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        for (String file : args) {
            Tokenizer t;
            try (GgufFile f = GgufFile.open(Path.of(file))) {
                t = Tokenizer.fromGguf(f);
            }
            long b0 = System.nanoTime();
            TokenTrie trie = TokenTrie.of(pieces(t));
            long buildMicros = (System.nanoTime() - b0) / 1000;
            Grammar g = Grammar.fromJsonSchema(SCHEMA);
            GrammarConstraint c = new GrammarConstraint(g, trie, t.endOfGenerationIds());
            int[] ids = longestMatch(t, c, DOC.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            long[] mask = new long[(t.size() + 63) / 64];
            double[] best = new double[ids.length + 1];
            Arrays.fill(best, Double.MAX_VALUE);
            for (int round = 0; round < 12; round++) { // the first rounds warm up; each state's best time is kept
                GrammarMatcher m = c.newMatcher();
                for (int i = 0; i <= ids.length; i++) {
                    long t0 = System.nanoTime();
                    c.fillMask(m, mask);
                    best[i] = Math.min(best[i], (System.nanoTime() - t0) / 1e3);
                    if (i < ids.length && !c.accept(m, ids[i])) {
                        throw new IllegalStateException("the document's token " + i + " is refused: " + t.piece(ids[i]));
                    }
                }
                if (!m.isComplete()) {
                    throw new IllegalStateException("the document is not complete");
                }
            }
            double sum = 0;
            for (double v : best) {
                sum += v;
            }
            double[] sorted = best.clone();
            Arrays.sort(sorted);
            System.out.printf("%s: %d tokens, trie of %d nodes built in %d ms; mask per token over %d states: mean %.1f us,"
                    + " median %.1f us, worst %.1f us%n", Path.of(file).getFileName(), t.size(), trie.nodeCount(),
                    buildMicros / 1000, best.length, sum / best.length, sorted[sorted.length / 2], sorted[sorted.length - 1]);
        }
    }

    /** The document as the longest allowed token at each step (what a model that writes it would draw). */
    static int[] longestMatch(Tokenizer t, GrammarConstraint c, byte[] doc) {
        GrammarMatcher m = c.newMatcher();
        long[] mask = new long[(t.size() + 63) / 64];
        int[] out = new int[doc.length];
        int n = 0;
        int at = 0;
        while (at < doc.length) {
            c.fillMask(m, mask);
            int best = -1;
            int bestLen = 0;
            for (int id = 0; id < t.size(); id++) {
                byte[] p = t.pieceBytes(id, false);
                if ((mask[id >>> 6] >>> (id & 63) & 1) != 0 && p.length > bestLen && at + p.length <= doc.length
                        && Arrays.equals(p, 0, p.length, doc, at, at + p.length)) {
                    best = id;
                    bestLen = p.length;
                }
            }
            if (best < 0) {
                throw new IllegalStateException("no allowed token continues the document at byte " + at);
            }
            c.accept(m, best);
            out[n++] = best;
            at += bestLen;
        }
        return Arrays.copyOf(out, n);
    }

    static byte[][] pieces(Tokenizer t) {
        byte[][] p = new byte[t.size()][];
        for (int i = 0; i < p.length; i++) {
            p[i] = t.pieceBytes(i, false);
        }
        return p;
    }
}
