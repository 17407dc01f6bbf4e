package ml.juno.engine.model;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;

/** Prints the largest full-logit difference against llama.cpp per reference case (diagnostic, asserts nothing). */
class ReferenceErrorReport {
    @Test
    void report() throws Exception {
        if (System.getProperty("juno.report") == null) {
            return;
        }
        for (ReferenceCase c : ReferenceCase.load(System.getProperty("juno.report").split(",")).toList()) {
            int[] prompt = c.ints("prompt_tokens");
            try (GgufFile f = GgufFile.open(c.model()); Model m = Model.load(f, new EngineOptions(2, 512, KvType.valueOf(System.getProperty("juno.kv", "F32")), 64, 1), Backends::select);
                 InferenceSession s = m.newSession()) {
                StepBatch.Builder b = new StepBatch.Builder(64);
                b.addPrompt(0, 0, prompt, 0, prompt.length, true);
                Logits l = s.forward(b.build());
                float[] full = c.floats("first_generated_position_full_logits");
                double max = 0;
                double sum = 0;
                for (int t = 0; t < full.length; t++) {
                    double e = Math.abs(l.get(0, t) - full[t]);
                    max = Math.max(max, e);
                    sum += e;
                }
                System.out.printf("%-45s max %.5f mean %.5f%n", c.name(), max, sum / full.length);
            }
        }
    }
}
