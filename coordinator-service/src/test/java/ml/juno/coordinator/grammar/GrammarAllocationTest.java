package ml.juno.coordinator.grammar;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import ml.juno.coordinator.sampling.Sampler;
import ml.juno.coordinator.sampling.SamplerState;
import ml.juno.coordinator.sampling.SamplingParams;
import org.junit.jupiter.api.Test;

/** A constrained draw (mask walk, masking, matcher advance) allocates nothing per token once its buffers have grown. */
class GrammarAllocationTest {
    private static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Test
    void constrainedDraw_allocatesNothingPerToken() {
        assumeTrue(MX.isThreadAllocatedMemorySupported() && MX.isThreadAllocatedMemoryEnabled(), "cannot measure allocation");
        SplittableRandom r = new SplittableRandom(3);
        String alphabet = "[],\"ab01é";
        int vocab = 2048;
        byte[][] pieces = new byte[vocab][];
        for (int i = 0; i < vocab; i++) {
            StringBuilder b = new StringBuilder();
            if (i < alphabet.length()) {
                b.append(alphabet.charAt(i)); // every character alone, so some token always fits
            } else {
                for (int k = 1 + r.nextInt(4); k > 0; k--) {
                    b.append(alphabet.charAt(r.nextInt(alphabet.length())));
                }
            }
            pieces[i] = b.toString().getBytes(StandardCharsets.UTF_8);
        }
        pieces[vocab - 1] = new byte[0]; // an end token
        // a grammar without an end: the draw loop can run as long as the test wants
        Grammar g = Grammar.parseGbnf("root ::= \"[\" (item \",\")*\nitem ::= \"\\\"\" [a-bé]{0,5} \"\\\"\" | [0-1]{1,3} | \"[\" \"]\"");
        GrammarConstraint c = new GrammarConstraint(g, TokenTrie.of(pieces), new int[] {vocab - 1});
        SamplerState st = new SamplerState(SamplingParams.defaults(9).withGrammar(c), vocab);
        Sampler sampler = new Sampler(vocab);
        float[] logits = new float[vocab];
        for (int i = 0; i < vocab; i++) {
            logits[i] = (float) r.nextGaussian();
        }
        for (int i = 0; i < 3000; i++) { // warm-up: the buffers grow, the JIT compiles
            assertTrue(st.advanceGrammar(sampler.sample(logits, 0, st)));
        }
        MX.getCurrentThreadAllocatedBytes(); // the probe may allocate on first use
        long best = Long.MAX_VALUE;
        for (int run = 0; run < 3; run++) {
            long before = MX.getCurrentThreadAllocatedBytes();
            int refused = 0;
            for (int i = 0; i < 300; i++) {
                refused += st.advanceGrammar(sampler.sample(logits, 0, st)) ? 0 : 1; // no message built per draw
            }
            assertTrue(refused == 0, refused + " drawn tokens were not allowed");
            best = Math.min(best, MX.getCurrentThreadAllocatedBytes() - before);
        }
        assertTrue(best < 300, best + " bytes allocated by 300 constrained draws");
    }
}
