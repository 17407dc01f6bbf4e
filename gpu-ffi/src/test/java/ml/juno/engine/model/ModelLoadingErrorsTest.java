package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.function.Predicate;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.GgufWriter;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad models and bad requests fail with a message naming the problem, before any compute. */
class ModelLoadingErrorsTest {
    @TempDir
    Path tmp;

    private static Path stories() {
        return ReferenceCase.modelFile("stories260K.gguf");
    }

    /** A copy of stories260K with tensors rewritten by {@code edit} (which may drop them by returning false). */
    private Path variant(String name, Predicate<GgufTensorInfo> keep, java.util.function.Function<GgufTensorInfo, GgufTensorInfo> change)
            throws Exception {
        Path out = tmp.resolve(name + ".gguf");
        try (GgufFile f = GgufFile.open(stories())) {
            GgufWriter w = new GgufWriter().putAll(f.metadata());
            for (GgufTensorInfo t : f.tensors()) {
                if (!keep.test(t)) {
                    continue;
                }
                GgufTensorInfo c = change.apply(t);
                if (c == t) {
                    w.addTensor(f, t);
                } else {
                    w.addTensor(c.name(), c.type(), c.shape(), f.data(t).asSlice(0, c.byteSize()));
                }
            }
            w.write(out);
        }
        return out;
    }

    private static String loadError(Path p) throws Exception {
        try (GgufFile f = GgufFile.open(p)) {
            return assertThrows(IllegalArgumentException.class, () -> Model.load(f, EngineOptions.defaults().withThreads(1), Backends::select))
                    .getMessage();
        }
    }

    @Test
    void unknownArchitecture_isRefusedWithTheSupportedList() throws Exception {
        Path out = tmp.resolve("mamba.gguf");
        try (GgufFile f = GgufFile.open(stories())) {
            GgufWriter w = new GgufWriter().putAll(f.metadata()).putString("general.architecture", "mamba");
            for (GgufTensorInfo t : f.tensors()) {
                w.addTensor(f, t);
            }
            w.write(out);
        }
        String msg = loadError(out);
        assertTrue(msg.contains("'mamba'") && msg.contains("supported: llama, qwen2, qwen3, qwen3moe, phi3, gemma3"), msg);
    }

    @Test
    void missingTensor_isNamed() throws Exception {
        String msg = loadError(variant("missing", t -> !t.name().equals("blk.3.ffn_up.weight"), t -> t));
        assertTrue(msg.contains("missing tensor blk.3.ffn_up.weight"), msg);
    }

    @Test
    void wrongShape_isNamedWithBothShapes() throws Exception {
        String msg = loadError(variant("shape", t -> true, t -> t.name().equals("blk.1.attn_k.weight")
                ? new GgufTensorInfo(t.name(), t.type(), new long[] {64, 16}, 0) : t));
        assertTrue(msg.contains("blk.1.attn_k.weight") && msg.contains("[64, 16]") && msg.contains("[64, 32]"), msg);
    }

    @Test
    void unsupportedBlockType_isNamed() throws Exception {
        String msg = loadError(variant("type", t -> true, t -> t.name().equals("blk.0.attn_q.weight")
                ? new GgufTensorInfo(t.name(), GgmlType.IQ4_NL, t.shape(), 0) : t));
        assertTrue(msg.contains("blk.0.attn_q.weight") && msg.contains("IQ4_NL") && msg.contains("Q4_K"), msg);
    }

    @Test
    void promptLongerThanTheContext_isRefusedBeforeCompute() throws Exception {
        try (GgufFile f = GgufFile.open(stories());
             Model m = Model.load(f, new EngineOptions(1, 16, KvType.F32, 8, 1), Backends::select);
             InferenceSession s = m.newSession()) {
            int[] prompt = new int[17];
            java.util.Arrays.fill(prompt, 1);
            String msg = assertThrows(IllegalArgumentException.class, () -> s.generate(prompt, 1, 5)).getMessage();
            assertTrue(msg.contains("17 tokens") && msg.contains("context of 16"), msg);
            StepBatch.Builder b = new StepBatch.Builder(2);
            b.add(0, 16, 1, true);
            msg = assertThrows(IllegalArgumentException.class, () -> s.forward(b.build())).getMessage();
            assertTrue(msg.contains("position 16"), msg);
        }
    }
}
