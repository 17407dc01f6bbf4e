package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Arrays;
import java.util.Random;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kv.KvCache;
import ml.juno.engine.kv.KvLayout;
import ml.juno.engine.kv.KvType;
import org.junit.jupiter.api.Test;

/**
 * The native backend's attention over an F16 cache runs the query heads of one KV head as a group (one kernel call for
 * their scores, one for their weighted values, fewer heads per group when a step has few rows): every output element
 * must equal, bit for bit, the Java backend's one head at a time. Shapes with eight, three and one heads per KV head,
 * head sizes with and without a tail of eight, a prompt's rows, a decode row, two slots, and a sliding window.
 */
class NativeAttentionGroupsTest {

    @Test
    void groupedHeads_giveTheJavaBackendsBits() {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            return; // no native library here: NativeKernelsTest says whether there should be one
        }
        AttentionShape[] shapes = {new AttentionShape(32, 4, 64, 0.125f), new AttentionShape(12, 4, 20, 0.2f),
                new AttentionShape(4, 4, 16, 0.25f)};
        try (CpuBackend nat = new CpuBackend(2, l.kernels()); CpuBackend ref = new CpuBackend(1)) {
            for (AttentionShape shape : shapes) {
                try (KvCache cache = new KvCache(new KvLayout(1, 2, 64, shape.kvDim(), KvType.F16))) {
                    Random r = new Random(shape.heads());
                    float[] k = new float[shape.kvDim()];
                    float[] v = new float[shape.kvDim()];
                    for (int slot = 0; slot < 2; slot++) {
                        for (int p = 0; p < 50; p++) {
                            for (int i = 0; i < k.length; i++) {
                                k[i] = (float) r.nextGaussian();
                                v[i] = (float) r.nextGaussian();
                            }
                            cache.store(0, slot, p, k, 0, v, 0);
                        }
                    }
                    BatchRows prompt = new BatchRows(30);
                    for (int p = 0; p < 29; p++) {
                        prompt.add(0, p);
                    }
                    prompt.add(1, 49);
                    BatchRows decode = new BatchRows(1);
                    decode.add(1, 41);
                    for (BatchRows rows : new BatchRows[] {prompt, decode}) {
                        for (int window : new int[] {0, 7}) {
                            float[] q = new float[rows.size() * shape.qDim()];
                            for (int i = 0; i < q.length; i++) {
                                q[i] = (float) r.nextGaussian();
                            }
                            float[] a = new float[q.length];
                            float[] b = new float[q.length];
                            nat.attention(cache, 0, shape, rows, q, a, window);
                            ref.attention(cache, 0, shape, rows, q, b, window);
                            String what = shape.heads() + " heads over " + shape.kvHeads() + ", head size " + shape.headDim()
                                    + ", " + rows.size() + " rows, window " + window;
                            assertArrayEquals(b, a, what);
                            assertFalse(Arrays.equals(a, new float[a.length]), what + ": something was computed");
                        }
                    }
                }
            }
        }
    }
}
