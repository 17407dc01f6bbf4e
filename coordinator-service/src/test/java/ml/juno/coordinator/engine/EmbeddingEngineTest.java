package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.scheduler.EmbeddingRequest;
import ml.juno.coordinator.scheduler.RequestLimitException;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.engine.embedding.Embedder;
import ml.juno.engine.embedding.Pooling;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import org.junit.jupiter.api.Test;

/**
 * Embeddings through the scheduler and the generation loop on a real engine: many inputs share steps (more inputs
 * than slots, inputs longer than a step's token budget so they are pooled across steps), each equal to the same input
 * embedded alone on a flat session of the Java backend; deterministic; no prefix cache read or written; every KV block
 * released; an input too long for the context refused with its length.
 */
class EmbeddingEngineTest {

    private static int[] input(int length, int seed) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) {
            p[i] = 1 + (seed * 131 + i * 17) % 500;
        }
        return p;
    }

    private static EmbeddingOutput.Result embed(InferenceEngine e, List<int[]> inputs, Pooling pooling) throws Exception {
        EmbeddingOutput out = e.newEmbeddings();
        for (int[] in : inputs) {
            assertInstanceOf(SubmitResult.Accepted.class, out.submit(new EmbeddingRequest(in, pooling, 0)));
        }
        return out.await();
    }

    @Test
    void manyInputs_shareSteps_andEqualEachInputEmbeddedAlone() throws Exception {
        List<int[]> inputs = new ArrayList<>();
        int[] lengths = {3, 70, 16, 1, 33, 150, 9, 64, 17, 5};
        for (int i = 0; i < lengths.length; i++) {
            inputs.add(input(lengths[i], i));
        }
        // 4 slots, 64 tokens per step: 10 inputs queue, the long ones are split over several steps
        try (InferenceEngine e = EngineAssembly.open(InferenceEngineTest.config("stories260K.gguf", 4))) {
            assertEquals(Pooling.MEAN, e.pooling());
            EngineStats before = e.stats();
            EmbeddingOutput.Result r = embed(e, inputs, Pooling.MEAN);
            EngineStats after = e.stats();
            assertEquals(inputs.size(), r.vectors().size());
            assertEquals(java.util.Arrays.stream(lengths).sum(), r.promptTokens());
            assertTrue(after.steps() - before.steps() < 10, "10 inputs took " + (after.steps() - before.steps()) + " steps");
            assertEquals(0, after.kvBlocksUsed(), "KV blocks left after the request");
            assertEquals(0, after.generatedTokens() - before.generatedTokens(), "an embedding sampled a token");

            try (GgufFile f = GgufFile.open(InferenceEngineTest.model("stories260K.gguf"));
                 Model m = Model.load(f, new EngineOptions(2, 256, KvType.F32, 64, 1), t -> new CpuBackend(2, null));
                 InferenceSession s = m.newSession()) {
                Embedder alone = new Embedder(s);
                for (int i = 0; i < inputs.size(); i++) {
                    float[] v = r.vectors().get(i);
                    assertEquals(e.embeddingLength(), v.length);
                    assertArrayEquals(alone.embed(inputs.get(i), Pooling.MEAN), v, 0f, "input " + i);
                }
                // the other poolings, through the same path
                EmbeddingOutput.Result last = embed(e, inputs.subList(0, 3), Pooling.LAST);
                EmbeddingOutput.Result cls = embed(e, inputs.subList(0, 3), Pooling.CLS);
                for (int i = 0; i < 3; i++) {
                    assertArrayEquals(alone.embed(inputs.get(i), Pooling.LAST), last.vectors().get(i), 0f, "last " + i);
                    assertArrayEquals(alone.embed(inputs.get(i), Pooling.CLS), cls.vectors().get(i), 0f, "cls " + i);
                }
            }
            // again: the same bits, and no prefix served from the cache (every token computed again)
            EngineStats third = e.stats();
            EmbeddingOutput.Result again = embed(e, inputs, Pooling.MEAN);
            for (int i = 0; i < inputs.size(); i++) {
                assertArrayEquals(r.vectors().get(i), again.vectors().get(i), 0f, "input " + i + " again");
            }
            assertEquals(third.prefixHitTokens(), e.stats().prefixHitTokens());
        }
    }

    @Test
    void embeddingsBesideAGeneration_leaveItsTokensAsTheyWere() throws Exception {
        int[] prompt = input(40, 99);
        try (InferenceEngine e = EngineAssembly.open(InferenceEngineTest.config("stories260K.gguf", 4))) {
            int[] alone = InferenceEngineTest.generate(e, prompt, 24, SamplingParams.greedy());
            InferenceEngineTest.Collect sink = new InferenceEngineTest.Collect();
            InferenceEngineTest.submit(e, InferenceEngineTest.request(prompt, 24, SamplingParams.greedy()), sink);
            EmbeddingOutput.Result r = embed(e, List.of(input(50, 1), input(20, 2), prompt), Pooling.MEAN);
            sink.done.await();
            assertArrayEquals(alone, sink.tokens.stream().mapToInt(Integer::intValue).toArray());
            assertEquals(3, r.vectors().size());
        }
    }

    @Test
    void anInputLongerThanTheContext_isRefusedWithItsLength_andNothingStaysQueued() throws Exception {
        try (InferenceEngine e = EngineAssembly.open(InferenceEngineTest.config("stories260K.gguf", 2))) {
            EmbeddingOutput out = e.newEmbeddings();
            out.submit(new EmbeddingRequest(input(10, 1), Pooling.MEAN, 0));
            RequestLimitException ex = assertThrows(RequestLimitException.class,
                    () -> out.submit(new EmbeddingRequest(input(300, 2), Pooling.MEAN, 0)));
            assertEquals(RequestLimitException.Part.PROMPT_LENGTH, ex.part());
            assertEquals(300, ex.value());
            assertEquals(256, ex.limit());
            assertThrows(EmbeddingOutput.EmbeddingFailedException.class, out::await); // the first was cancelled
            assertEquals(0, e.stats().kvBlocksUsed());
        }
    }
}
