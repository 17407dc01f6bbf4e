package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.cpu.ScalarBackend;
import ml.juno.engine.kv.KvType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A whole forward pass on the vector backend against the same pass on the scalar reference backend. */
class BackendsAgreeTest {
    @ParameterizedTest
    @ValueSource(strings = {"stories260K.gguf", "tiny-llama-random-Q4_K_M.gguf", "tiny-llama-random-Q5_K-pure.gguf",
            "tiny-llama-random-Q3_K-pure.gguf", "tiny-llama-random-Q2_K-pure.gguf", "tiny-llama-random-Q8_0.gguf",
            "tiny-qwen2-random-Q8_0.gguf", "tiny-qwen3-random-Q4_K_M.gguf", "tiny-qwen3moe-random-Q8_0.gguf",
            "tiny-phi3-random-Q4_K_M.gguf"})
    void vectorAndScalarBackends_giveTheSameLogits(String file) throws Exception {
        int[] prompt = {1, 403, 407, 261, 378};
        EngineOptions o = new EngineOptions(2, 64, KvType.F32, 16, 1);
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile(file));
             Model vec = Model.load(f, o);
             Model ref = Model.load(f, o, ShardSpec.whole(vec.config().dims().layers()), new ScalarBackend());
             InferenceSession a = vec.newSession();
             InferenceSession b = ref.newSession()) {
            ForwardBatch batch = new ForwardBatch(16);
            batch.addPrompt(0, 0, prompt, 0, prompt.length, true);
            float[] la = a.forward(batch).copyRow(0);
            float[] lb = b.forward(batch).copyRow(0);
            double max = 0;
            for (int i = 0; i < la.length; i++) {
                max = Math.max(max, Math.abs(la[i] - lb[i]));
            }
            // both backends form the same exact integer block sums; only float scaling and lane order differ
            double bound = 1e-3;
            double m = max;
            assertTrue(max <= bound, () -> file + ": max logit difference " + m);
        }
    }
}
