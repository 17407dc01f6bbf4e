package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.kernel.cpu.ScalarBackend;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vector backend against the scalar reference backend. Every weight matrix of real model files goes through both
 * backends' matrix product with the same input (batch 1, which takes the fused single-row kernels, and batch 3, which
 * takes the decode-once path); a whole F32 forward pass is compared end to end. Whole passes over quantized or F16
 * weights are not compared here: activations are rounded to Q8/F16 between layers, so a one-ulp summation-order
 * difference can flip a rounding step and random models amplify it (see ReferenceLogitsTest); per-matrix products are
 * where the two backends must agree.
 */
class BackendsAgreeTest {

    @ParameterizedTest
    @ValueSource(strings = {"tiny-llama-random-Q4_K_M.gguf", "tiny-llama-random-Q5_K-pure.gguf", "tiny-llama-random-Q4_0-pure.gguf",
            "tiny-llama-random-Q3_K-pure.gguf", "tiny-llama-random-Q2_K-pure.gguf", "tiny-llama-random-Q6_K-pure.gguf",
            "tiny-llama-random-Q8_0.gguf", "tiny-llama-random-F16.gguf", "stories260K-Q4_0.gguf", "tiny-qwen3moe-random-Q4_K_M.gguf"})
    void everyWeightMatrix_givesTheSameProductOnBothBackends(String file) throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile(file));
             CpuBackend cpu = new CpuBackend(2);
             ScalarBackend scalar = new ScalarBackend()) {
            int checked = 0;
            for (GgufTensorInfo t : f.tensors()) {
                if (t.dims() < 2 || t.type().blockSize == 1 && t.type() != ml.juno.engine.tensor.GgmlType.F16) {
                    continue;
                }
                WeightMatrix w = WeightMatrix.dense(t.name(), t.type(), f.data(t), (int) t.rowCount(), (int) t.rowLength());
                for (int batch : new int[] {1, 3}) {
                    float[] x = new float[batch * w.cols()];
                    Random r = new Random(t.name().hashCode() + batch);
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) r.nextGaussian();
                    }
                    float[] a = new float[batch * w.rows()];
                    float[] b = new float[batch * w.rows()];
                    cpu.matmul(w, x, a, batch);
                    scalar.matmul(w, x, b, batch);
                    for (int i = 0; i < a.length; i++) {
                        float bound = 1e-5f * Math.max(1f, Math.abs(b[i]));
                        int at = i;
                        assertTrue(Math.abs(a[i] - b[i]) <= bound, () -> file + " " + t.name() + " (" + t.type() + ") batch "
                                + batch + " row " + at + ": vector " + a[at] + " vs scalar " + b[at]);
                    }
                }
                checked++;
            }
            assertTrue(checked >= 7, file + ": only " + checked + " matrices checked");
        }
    }

    @Test
    void wholeF32ForwardPass_givesTheSameLogitsOnBothBackends() throws Exception {
        int[] prompt = {1, 403, 407, 261, 378};
        EngineOptions o = new EngineOptions(2, 64, KvType.F32, 16, 1);
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"));
             Model vec = Model.load(f, o, Backends::select);
             Model ref = Model.load(f, o, ShardSpec.whole(vec.config().dims().layers()), t -> new ScalarBackend());
             InferenceSession a = vec.newSession();
             InferenceSession b = ref.newSession()) {
            StepBatch.Builder batch = new StepBatch.Builder(16);
            batch.addPrompt(0, 0, prompt, 0, prompt.length, true);
            float[] la = a.forward(batch.build()).copyRow(0);
            float[] lb = b.forward(batch.build()).copyRow(0);
            double max = 0;
            for (int i = 0; i < la.length; i++) {
                max = Math.max(max, Math.abs(la[i] - lb[i]));
            }
            double m = max;
            assertTrue(max <= 1e-4, () -> "stories260K: max logit difference " + m);
        }
    }
}
