package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.engine.moe.ExpertBudget;
import ml.juno.engine.moe.ExpertStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-process engine with {@code --expert-cache} ({@value ExpertBudget#PROPERTY}): greedy tokens equal the mapped
 * engine's, and a model file truncated under the running engine ends the requests in flight with an error naming
 * the file, never with tokens computed on other bytes.
 */
class StreamedExpertsEngineTest {
    private static final String MOE = "tiny-qwen3moe-random-Q4_K_M.gguf";

    @AfterEach
    void clear() {
        System.clearProperty(ExpertBudget.PROPERTY);
    }

    @Test
    void streamedEngine_givesTheMappedTokens_andAChangedFileFailsTheRequests(@TempDir Path tmp) throws Exception {
        Path copy = tmp.resolve(MOE);
        Files.copy(InferenceEngineTest.model(MOE), copy);
        EngineConfig config = InferenceEngineTest.config(MOE, 2);
        int[] prompt = {5, 17, 99, 250, 3, 42, 7};
        int[] mapped;
        try (InferenceEngine e = EngineAssembly.open(config)) {
            mapped = InferenceEngineTest.generate(e, prompt, 12, SamplingParams.greedy());
        }
        System.setProperty(ExpertBudget.PROPERTY, "0");
        try (InferenceEngine e = EngineAssembly.open(EngineConfig.defaults(copy).withThreads(2).withContextLength(256)
                .withKvType(config.kvType()).withMaxSequences(2).withMaxBatchTokens(64).withMaxQueue(512))) {
            assertEquals(1, ExpertStore.openStats().size(), "the engine streams its experts");
            assertArrayEquals(mapped, InferenceEngineTest.generate(e, prompt, 12, SamplingParams.greedy()));
            try (FileChannel ch = FileChannel.open(copy, StandardOpenOption.WRITE)) {
                ch.truncate(ch.size() - 4096);
            }
            InferenceEngineTest.Collect c = new InferenceEngineTest.Collect();
            InferenceEngineTest.submit(e, InferenceEngineTest.request(prompt, 12, SamplingParams.greedy()), c);
            c.await();
            assertEquals(FinishReason.ERROR, c.reason, c.message);
            assertTrue(c.message.contains("changed under the engine") && c.message.contains(copy.toString()), c.message);
            assertEquals(0, c.tokens.size(), "no token from a step that failed");
        }
        assertEquals(0, ExpertStore.openStats().size(), "closed with the engine");
    }
}
