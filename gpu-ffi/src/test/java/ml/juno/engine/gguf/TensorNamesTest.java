package ml.juno.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class TensorNamesTest {

    @Test
    void block_buildsGgufTensorNames() {
        assertEquals("blk.0.attn_q.weight", TensorNames.block(0, TensorNames.ATTN_Q));
        assertEquals("blk.11.attn_k.bias", TensorNames.block(11, TensorNames.ATTN_K, TensorNames.BIAS));
        assertEquals("token_embd.weight", TensorNames.global(TensorNames.TOKEN_EMBD));
        assertEquals("llama.attention.head_count_kv", GgufKeys.arch("llama", GgufKeys.ATTENTION_HEAD_COUNT_KV));
        assertThrows(IllegalArgumentException.class, () -> TensorNames.block(-1, TensorNames.ATTN_Q));
    }

    @Test
    void layerOf_parsesBlockNamesAndRejectsLookalikes() {
        assertEquals(0, TensorNames.layerOf("blk.0.attn_q.weight"));
        assertEquals(123, TensorNames.layerOf("blk.123.ffn_down_exps.weight"));
        assertEquals(-1, TensorNames.layerOf("output.weight"));
        assertEquals(-1, TensorNames.layerOf("blk.x.attn_q.weight"));
        assertEquals(-1, TensorNames.layerOf("blk..attn_q.weight"));
        assertEquals(-1, TensorNames.layerOf("blk.7"));
        assertEquals(-1, TensorNames.layerOf("blk.99999999999.a.weight"));
    }

    @Test
    void everyTensorOfEveryShippedModel_isNamedByTheHelpers() throws IOException {
        for (var p : TestModels.allGgufFiles()) {
            try (GgufFile f = GgufFile.open(p)) {
                int blocks = f.tensors().isEmpty() ? 0 : ModelHyperParams.from(f.metadata()).blockCount();
                for (GgufTensorInfo t : f.tensors()) {
                    int layer = TensorNames.layerOf(t.name());
                    if (layer >= 0) {
                        assertEquals(true, layer < blocks, t.name() + " layer within block_count " + blocks);
                        String rest = t.name().substring(("blk." + layer + ".").length());
                        String base = rest.substring(0, rest.lastIndexOf('.'));
                        String suffix = rest.substring(rest.lastIndexOf('.') + 1);
                        assertEquals(t.name(), TensorNames.block(layer, base, suffix));
                    }
                }
            }
        }
    }
}
