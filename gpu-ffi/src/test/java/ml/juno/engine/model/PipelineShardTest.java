package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;

/** Two pipeline shards (a layer range each), hidden states handed from one to the next, equal the whole model. */
class PipelineShardTest {
    @Test
    void twoLayerRangeShards_giveTheWholeModelsLogits() throws Exception {
        int[] prompt = {1, 403, 407, 261, 378};
        EngineOptions o = new EngineOptions(2, 32, KvType.F32, 8, 1);
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"));
             Model whole = Model.load(f, o, Backends::select);
             Model first = Model.load(f, o, new ShardSpec(0, 2, 0, 1), Backends::select);
             Model last = Model.load(f, o, new ShardSpec(2, 5, 0, 1), Backends::select);
             InferenceSession sw = whole.newSession();
             InferenceSession s1 = first.newSession();
             InferenceSession s2 = last.newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(8);
            int dim = whole.config().dims().embedding();
            for (int step = 0; step < 2; step++) {
                b.clear();
                if (step == 0) {
                    b.addPrompt(0, 0, prompt, 0, prompt.length, true);
                } else {
                    b.add(0, prompt.length, 42, true);
                }
                float[] ref = sw.forward(b.build()).copyRow(0);
                assertNull(s1.forward(b.build()), "a non-last shard returns no logits");
                System.arraycopy(s1.hiddenStates(), 0, s2.hiddenStates(), 0, b.size() * dim);
                assertArrayEquals(ref, s2.forward(b.build()).copyRow(0), "step " + step);
            }
        }
    }
}
