package ml.juno.coordinator.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.engine.sampling.DrawResult;
import ml.juno.engine.sampling.RowDraw;
import ml.juno.engine.sampling.SamplingChain;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.StepBatch;
import org.junit.jupiter.api.Test;

/**
 * A token drawn on a cluster's last node (the sequence's state sent in the step plan, drawn by the engine's chain, the
 * result back over the wire, the coordinator's generator moved on) is the token the coordinator's own sampler draws,
 * step after step, for every kind of setting a request can carry without a grammar; and so are its log-probabilities.
 */
class NodeDrawParityTest {
    static final int V = 300;

    static List<SamplingParams> settings() {
        return List.of(
                SamplingParams.greedy(),
                SamplingParams.defaults(42),
                new SamplingParams(1.3f, new Truncation(0, 0.8f, 0f), RepetitionPenalties.NONE, LogitBias.NONE, 7),
                new SamplingParams(0.7f, new Truncation(25, 1f, 0.1f), new RepetitionPenalties(1.3f, 0.2f, 0.4f, 16),
                        LogitBias.of(Map.of(5, 3f, 17, Float.NEGATIVE_INFINITY)), 99),
                new SamplingParams(0f, Truncation.NONE, new RepetitionPenalties(1.5f, 0f, 0f, 8), LogitBias.of(Map.of(2, 1.5f)), 0));
    }

    @Test
    void drawnOnTheNode_equalsDrawnHere_tokenForTokenAndLogprobForLogprob() {
        Sampler here = new Sampler(V);
        SamplingChain node = new SamplingChain(V);
        int[] eos = {0, 1};
        for (SamplingParams p : settings()) {
            for (int top : new int[] {-1, 3}) {
                SamplerState a = new SamplerState(p, V, top);
                SamplerState b = new SamplerState(p, V, top);
                int[] prompt = {4, 9, 9, 17, 5};
                a.accept(prompt, 0, prompt.length);
                b.accept(prompt, 0, prompt.length);
                SplittableRandom rnd = new SplittableRandom(p.seed() * 31 + top);
                int distinct = 0;
                int last = -1;
                for (int step = 0; step < 60; step++) {
                    if (step < 5) { // min_tokens holds back the end tokens
                        a.suppress(eos);
                        b.suppress(eos);
                    } else {
                        a.clearSuppressed();
                        b.clearSuppressed();
                    }
                    float[] logits = new float[V];
                    for (int i = 0; i < V; i++) {
                        logits[i] = (float) (rnd.nextGaussian() * 2);
                    }
                    int want = here.sample(logits, 0, a);
                    TokenLogprobs wantLp = top >= 0 ? here.logprobs(logits, 0, want, top, a) : null;
                    a.accept(want);

                    assertTrue(b.drawsAnywhere());
                    StepBatch wire = StepBatch.newBuilder().setStepId(step).addSamplers(ProtoMapping.toProto(b.rowDraw())).build();
                    RowDraw d = ProtoMapping.samplers(wire, 1).getFirst();
                    DrawResult r = ProtoMapping.fromProto(ProtoMapping.toProto(node.draw(logits, 0, d)));
                    assertEquals("", r.error());
                    assertEquals(want, r.token(), p + ", step " + step);
                    if (top >= 0) {
                        assertEquals(wantLp, new TokenLogprobs(r.token(), r.logprob(), r.topIds(), r.topLogprobs()), p + ", step " + step);
                    } else {
                        assertFalse(r.hasLogprobs());
                    }
                    b.drawnElsewhere();
                    b.accept(r.token());
                    distinct += r.token() != last ? 1 : 0;
                    last = r.token();
                    if (step < 5) {
                        assertTrue(r.token() > 1, "suppressed tokens are never drawn");
                    }
                }
                assertTrue(distinct > 10, "the logits vary, so the tokens do: " + p);
            }
        }
    }

    @Test
    void aGrammarKeepsTheDrawOnTheCoordinator() {
        byte[][] pieces = new byte[V][];
        for (int i = 0; i < V; i++) {
            pieces[i] = ("t" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        var g = ml.juno.coordinator.grammar.Grammar.parseGbnf("root ::= \"t1\" \"t2\"");
        var c = new ml.juno.coordinator.grammar.GrammarConstraint(g, ml.juno.coordinator.grammar.TokenTrie.of(pieces), new int[] {0});
        assertFalse(new SamplerState(SamplingParams.defaults(1).withGrammar(c), V).drawsAnywhere(), "its mask needs the coordinator");
        SamplerState plain = new SamplerState(SamplingParams.defaults(1), V);
        assertTrue(plain.drawsAnywhere());
        assertEquals(0, plain.rowDraw().windowSize(), "no penalties: no window travels");
    }
}
