package ml.juno.coordinator.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.tokenizer.ChatMessage;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.engine.kv.KvType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Coordinator JFR events: off by default, and a recorded in-process generation summed up by the summariser. */
class RecordingSummaryTest {
    static final Path MODEL = Path.of(System.getProperty("juno.models.dir", "../models"), "stories260K.gguf");
    static final int NEW_TOKENS = 12;
    static final String STORY = "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
            + "park with her big red ball and her friend Ben.";

    @TempDir
    Path tmp;

    @Test
    void withoutRecording_eventsAreOffAndCheckingAllocatesNothing() {
        assertFalse(SchedulerStepEvent.enabled());
        assertFalse(TokenProducedEvent.enabled());
        assertFalse(KvCacheEvent.enabled());
        assertNull(TokenizerEvent.startIfEnabled());
        assertNull(TemplateFormatEvent.startIfEnabled());
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        int hits = probe(1_000); // warm up (class loading allocates)
        long before = threads.getThreadAllocatedBytes(tid);
        hits += probe(200_000);
        long allocated = threads.getThreadAllocatedBytes(tid) - before;
        assertEquals(0, hits);
        assertTrue(allocated < 16_384, "checking 200k times allocated " + allocated + " bytes");
    }

    private static int probe(int n) {
        int hits = 0;
        for (int i = 0; i < n; i++) {
            if (SchedulerStepEvent.startIfEnabled() != null || TokenProducedEvent.enabled() || KvCacheEvent.enabled()
                    || TokenizerEvent.startIfEnabled() != null || TemplateFormatEvent.startIfEnabled() != null) {
                hits++;
            }
        }
        return hits;
    }

    @Test
    void recordedGeneration_summarisesToPlausibleFigures() throws Exception {
        Path file = tmp.resolve("local.jfr");
        int promptLength;
        int generated = 0;
        EngineConfig config = EngineConfig.defaults(MODEL).withThreads(2).withContextLength(256).withKvType(KvType.F32)
                .withMaxSequences(2).withMaxBatchTokens(64);
        try (InferenceEngine engine = EngineAssembly.open(config);
             Recording recording = new Recording(Configuration.getConfiguration("default"))) {
            recording.start();
            String text = engine.chatTemplate().render(new ChatRequest(List.of(ChatMessage.user(STORY)), true));
            int[] prompt = ChatTemplates.encodePrompt(engine.tokenizer(), text);
            promptLength = prompt.length;
            for (int request = 0; request < 2; request++) { // one after the other: the second reuses the first's prefix
                generated += generate(engine, prompt).size();
            }
            recording.stop();
            recording.dump(file);
        }
        assertTrue(promptLength > 2 * InferenceEngine.KV_BLOCK_SIZE, "prompt of " + promptLength + " tokens");
        assertEquals(2 * NEW_TOKENS, generated);

        RecordingSummary s = RecordingSummarizer.summarize(List.of(file));
        assertEquals(2, s.requests());
        assertEquals(generated, s.tokens());
        assertEquals(2, s.timeToFirstToken().count());
        assertTrue(s.timeToFirstToken().p50Ms() > 0);
        Latency step = s.stepLatency();
        assertEquals(s.steps().count(), step.count());
        assertTrue(step.count() >= 2 * NEW_TOKENS, "at least one step per token: " + step.count());
        assertTrue(step.p50Ms() > 0 && step.p50Ms() <= step.p95Ms() && step.p95Ms() <= step.p99Ms()
                && step.p99Ms() <= step.maxMs(), step.toString());
        assertTrue(s.busySeconds() > 0 && s.spanSeconds() > 0);
        assertTrue(s.tokensPerSecond() > 0 && s.wallTokensPerSecond() > 0);
        assertTrue(s.tokensPerSecond() >= s.wallTokensPerSecond() * 0.99, "busy time never exceeds the span");

        RecordingSummary.KvTotals kv = s.kvCache();
        assertEquals(2, kv.admissions());
        assertEquals(2L * promptLength, kv.hitTokens() + kv.missTokens());
        assertTrue(kv.hitTokens() >= 2 * InferenceEngine.KV_BLOCK_SIZE, "the second request reuses the prompt's blocks");

        assertEquals(1, s.forwardPasses().size(), "one shard: the whole model");
        RecordingSummary.ShardPasses whole = s.forwardPasses().get(0);
        assertEquals(0, whole.firstLayer());
        assertEquals(5, whole.endLayer());
        assertEquals(s.steps().prefillTokens() + s.steps().decodeTokens(), whole.rows(), "every computed row went through a forward pass");
        assertEquals(kv.missTokens() + 2L * (NEW_TOKENS - 1), whole.rows(), "prompt tokens not cached, then one row per decode");
        assertEquals(1, s.templates().count());
        assertTrue(s.tokenizer().count() >= 1);
        assertEquals(0, s.matMul().count(), "juno.MatMul is off in the default settings");
    }

    @Test
    void badInput_isAClearError() throws Exception {
        assertThrows(NoSuchFileException.class, () -> RecordingSummarizer.summarize(List.of(tmp.resolve("none.jfr"))));
        Path text = Files.writeString(tmp.resolve("text.jfr"), "not a recording");
        IOException notJfr = assertThrows(IOException.class, () -> RecordingSummarizer.summarize(List.of(text)));
        assertTrue(notJfr.getMessage().contains("not a readable JFR recording"), notJfr.getMessage());
        Path empty = tmp.resolve("empty.jfr");
        try (Recording r = new Recording()) {
            r.enable("jdk.CPULoad");
            r.start();
            r.stop();
            r.dump(empty);
        }
        IOException noJuno = assertThrows(IOException.class, () -> RecordingSummarizer.summarize(List.of(empty)));
        assertTrue(noJuno.getMessage().startsWith("no Juno events in "), noJuno.getMessage());
    }

    private static List<Integer> generate(InferenceEngine engine, int[] prompt) throws InterruptedException {
        List<Integer> tokens = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        FinishReason[] reason = new FinishReason[1];
        GenerationListener sink = new GenerationListener() {
            @Override
            public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
                tokens.add(tokenId);
            }

            @Override
            public void onChoiceFinished(int choice, FinishReason r, Usage usage, String message) {
                reason[0] = r;
                done.countDown();
            }
        };
        SubmitResult r = engine.submit(new GenerationRequest(prompt, SamplingParams.greedy(),
                StopCondition.of(NEW_TOKENS, new int[0]), 0, -1), sink);
        assertTrue(r instanceof SubmitResult.Accepted, r.toString());
        assertTrue(done.await(60, TimeUnit.SECONDS));
        assertEquals(FinishReason.LENGTH, reason[0]);
        return tokens;
    }
}
