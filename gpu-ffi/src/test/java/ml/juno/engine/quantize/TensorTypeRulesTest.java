package ml.juno.engine.quantize;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;

/** llama.cpp's per-tensor type choices (llama_tensor_get_type) on llama-shaped tensor lists. */
class TensorTypeRulesTest {

    private static List<TensorTypeRules.Tensor> llama(int layers, int dim, int ffn, int vocab, boolean withOutput) {
        List<TensorTypeRules.Tensor> t = new ArrayList<>();
        t.add(new TensorTypeRules.Tensor("token_embd.weight", GgmlType.F32, new long[] {dim, vocab}));
        t.add(new TensorTypeRules.Tensor("output_norm.weight", GgmlType.F32, new long[] {dim}));
        if (withOutput) {
            t.add(new TensorTypeRules.Tensor("output.weight", GgmlType.F32, new long[] {dim, vocab}));
        }
        for (int l = 0; l < layers; l++) {
            for (String n : new String[] {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up"}) {
                t.add(new TensorTypeRules.Tensor("blk." + l + "." + n + ".weight", GgmlType.F32, new long[] {dim, dim}));
            }
            t.add(new TensorTypeRules.Tensor("blk." + l + ".ffn_down.weight", GgmlType.F32, new long[] {ffn, dim}));
            t.add(new TensorTypeRules.Tensor("blk." + l + ".attn_norm.weight", GgmlType.F32, new long[] {dim}));
        }
        return TensorTypeRules.order(t);
    }

    private static List<Integer> layersWith(List<TensorTypeRules.Tensor> tensors, TensorTypeRules rules, String part, GgmlType type) {
        List<Integer> layers = new ArrayList<>();
        for (TensorTypeRules.Tensor t : tensors) {
            GgmlType got = rules.typeFor(t);
            if (t.name().contains(part) && got == type) {
                layers.add(TensorTypeRules.layerOf(t.name()));
            }
        }
        return layers;
    }

    @Test
    void q4KM_givesQ6KToOutputAndToTheUseMoreBitsLayersOfFfnDown() {
        List<TensorTypeRules.Tensor> t = llama(22, 256, 512, 1000, true);
        TensorTypeRules rules = new TensorTypeRules(QuantType.Q4_K_M, false, List.of(),
                new TensorTypeRules.ModelFacts("llama", 22, 32, 4, 0), t);
        // use_more_bits(i, 22): i < 2, i >= 19, or (i - 2) % 3 == 2
        assertEquals(List.of(0, 1, 4, 7, 10, 13, 16, 19, 20, 21), layersWith(t, rules, "ffn_down", GgmlType.Q6_K));
    }

    @Test
    void q4KM_outputAndNormsAndEmbeddings() {
        List<TensorTypeRules.Tensor> t = llama(4, 256, 512, 1000, true);
        TensorTypeRules rules = new TensorTypeRules(QuantType.Q4_K_M, false, List.of(),
                new TensorTypeRules.ModelFacts("llama", 4, 8, 8, 0), t);
        assertEquals("output.weight", t.get(0).name(), "non-block tensors first, by name");
        assertEquals(GgmlType.Q6_K, rules.typeFor(t.get(0)));
        assertEquals(GgmlType.F32, rules.typeFor(t.get(1)));        // output_norm
        assertEquals(GgmlType.Q4_K, rules.typeFor(t.get(2)));       // token_embd, not tied
    }

    @Test
    void tiedEmbeddings_getTheOutputType() {
        List<TensorTypeRules.Tensor> t = llama(2, 256, 512, 1000, false);
        TensorTypeRules rules = new TensorTypeRules(QuantType.Q4_0, false, List.of(),
                new TensorTypeRules.ModelFacts("llama", 2, 8, 8, 0), t);
        assertEquals("token_embd.weight", t.get(1).name());
        rules.typeFor(t.get(0));
        assertEquals(GgmlType.Q6_K, rules.typeFor(t.get(1)));
    }

    @Test
    void pure_usesTheDefaultTypeEverywhereButNorms() {
        List<TensorTypeRules.Tensor> t = llama(2, 256, 512, 1000, true);
        TensorTypeRules rules = new TensorTypeRules(QuantType.Q4_K_M, true, List.of(),
                new TensorTypeRules.ModelFacts("llama", 2, 8, 8, 0), t);
        for (TensorTypeRules.Tensor x : t) {
            assertEquals(x.shape().length == 1 ? GgmlType.F32 : GgmlType.Q4_K, rules.typeFor(x), x.name());
        }
    }

    @Test
    void rowsThatDoNotDivide_fallBackLikeLlamaCpp() {
        List<TensorTypeRules.Tensor> t = List.of(
                new TensorTypeRules.Tensor("blk.0.ffn_down.weight", GgmlType.F32, new long[] {172, 64}),
                new TensorTypeRules.Tensor("blk.0.ffn_up.weight", GgmlType.F32, new long[] {64, 172}),
                new TensorTypeRules.Tensor("blk.0.attn_q.weight", GgmlType.F32, new long[] {100, 64}));
        TensorTypeRules rules = new TensorTypeRules(QuantType.Q4_K_S, true, List.of(),
                new TensorTypeRules.ModelFacts("llama", 1, 8, 8, 0), t);
        assertEquals(GgmlType.F16, rules.typeFor(t.get(0)));   // Q4_K -> Q5_0 needs 32 | 172: no -> F16
        assertEquals(GgmlType.Q5_0, rules.typeFor(t.get(1)));  // 64 divides by 32
        assertEquals(GgmlType.F16, rules.typeFor(t.get(2)));
        assertEquals(3, rules.fallbacks());
    }

    @Test
    void overrides_winOverMixRules_firstMatchFirst() {
        List<TensorTypeRules.Tensor> t = llama(2, 256, 512, 1000, true);
        TensorTypeRules rules = new TensorTypeRules(QuantType.Q4_K_M, false,
                List.of(TensorTypeRules.Override.parse("ffn_down=q8_0"), TensorTypeRules.Override.parse("blk\\.1\\.=f16")),
                new TensorTypeRules.ModelFacts("llama", 2, 8, 8, 0), t);
        for (TensorTypeRules.Tensor x : t) {
            GgmlType got = rules.typeFor(x);
            if (x.name().contains("ffn_down")) {
                assertEquals(GgmlType.Q8_0, got, x.name());
            } else if (x.name().startsWith("blk.1.") && x.shape().length == 2) {
                assertEquals(GgmlType.F16, got, x.name());
            }
        }
    }

    @Test
    void order_sortsBlocksNumerically() {
        List<TensorTypeRules.Tensor> t = TensorTypeRules.order(List.of(
                new TensorTypeRules.Tensor("blk.10.attn_q.weight", GgmlType.F32, new long[] {4}),
                new TensorTypeRules.Tensor("blk.9.attn_q.weight", GgmlType.F32, new long[] {4}),
                new TensorTypeRules.Tensor("token_embd.weight", GgmlType.F32, new long[] {4}),
                new TensorTypeRules.Tensor("blk.9.attn_k.weight", GgmlType.F32, new long[] {4})));
        assertEquals(List.of("token_embd.weight", "blk.9.attn_k.weight", "blk.9.attn_q.weight", "blk.10.attn_q.weight"),
                t.stream().map(TensorTypeRules.Tensor::name).toList());
    }

    @Test
    void quantTypeNames_followLlamaQuantize() {
        assertEquals(QuantType.Q4_K_M, QuantType.parse("q4_k"));
        assertEquals(QuantType.Q3_K_M, QuantType.parse("Q3_K"));
        assertEquals(15, QuantType.parse("Q4_K_M").fileType);
        assertEquals(32, QuantType.parse("bf16").fileType);
    }
}
