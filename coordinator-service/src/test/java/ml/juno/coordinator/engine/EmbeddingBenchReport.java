package ml.juno.coordinator.engine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.scheduler.EmbeddingRequest;
import ml.juno.engine.kv.KvType;
import org.junit.jupiter.api.Test;

/**
 * Embeddings per second through the scheduler, not in the suite (a report: run it on a quiet machine).
 * {@code ./mvnw -o -q -pl coordinator-service -am test -Dtest=EmbeddingBenchReport -Dsurefire.failIfNoSpecifiedTests=false
 * -Djuno.embed.model=/path/m.gguf -Djuno.embed.inputs=64 -Djuno.embed.tokens=16 -Djuno.embed.threads=2 -Djuno.embed.rounds=3}: the inputs
 * submitted together (one request, batched by the scheduler) and one at a time, best of {@code rounds} rounds each after
 * a warm-up.
 */
class EmbeddingBenchReport {

    @Test
    void embeddingsPerSecond_batchedAndOneAtATime() throws Exception {
        Path model = Path.of(System.getProperty("juno.embed.model",
                System.getProperty("juno.models.dir", "../models") + "/stories260K.gguf"));
        int inputs = Integer.getInteger("juno.embed.inputs", 64);
        int tokens = Integer.getInteger("juno.embed.tokens", 16);
        int threads = Integer.getInteger("juno.embed.threads", 2);
        int rounds = Integer.getInteger("juno.embed.rounds", 3);
        EngineConfig config = EngineConfig.defaults(model).withThreads(threads).withContextLength(512).withKvType(KvType.F16)
                .withMaxSequences(64).withMaxBatchTokens(512).withMaxQueue(4096);
        List<int[]> data = new ArrayList<>();
        try (InferenceEngine e = EngineAssembly.open(config)) {
            int vocab = e.info().vocabSize();
            for (int i = 0; i < inputs; i++) {
                int[] t = new int[tokens];
                for (int k = 0; k < tokens; k++) {
                    t[k] = 1 + (i * 7919 + k * 104729) % (vocab - 1);
                }
                data.add(t);
            }
            System.out.printf("EMBED warm-up: batched %.1f/s%n", run(e, data, true));
            System.out.printf("EMBED warm-up: one at a time %.1f/s%n", run(e, data, false));
            double batched = 0;
            double single = 0;
            for (int r = 0; r < rounds; r++) {
                batched = Math.max(batched, run(e, data, true));
                single = Math.max(single, run(e, data, false));
            }
            System.out.printf("EMBED %s: %d inputs x %d tokens, %d threads, backend %s: batched %.1f embeddings/s (%.0f tokens/s), "
                            + "one at a time %.1f embeddings/s (%.0f tokens/s), %.2fx%n", model.getFileName(), inputs, tokens, threads,
                    e.backend(), batched, batched * tokens, single, single * tokens, batched / single);
        }
    }

    /** Embeddings per second of one round. */
    private static double run(InferenceEngine e, List<int[]> data, boolean together) throws Exception {
        long t0 = System.nanoTime();
        if (together) {
            EmbeddingOutput out = e.newEmbeddings();
            for (int[] t : data) {
                out.submit(new EmbeddingRequest(t, e.pooling(), 0));
            }
            out.await();
        } else {
            for (int[] t : data) {
                EmbeddingOutput out = e.newEmbeddings();
                out.submit(new EmbeddingRequest(t, e.pooling(), 0));
                out.await();
            }
        }
        return data.size() / ((System.nanoTime() - t0) / 1e9);
    }
}
