package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.LogitBias;
import ml.juno.coordinator.sampling.RepetitionPenalties;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.sampling.Truncation;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.engine.kv.KvType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The in-process engine on real models: batching, prefix caching, seeding, cancellation and shutdown. */
class InferenceEngineTest {
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models"));

    static final List<String> PROMPTS = List.of(
            "Once upon a time",
            "The little dog ran to the park and saw a big red ball. He",
            "Lily wanted to play",
            "One day, a boy named Tom found a shiny rock in the garden. He picked it up and showed it to his mom, who",
            "The sun was hot",
            "Sara and Ben were friends. They liked to",
            "There was a cat",
            "Mom said no, but");

    static Path model(String name) {
        Path p = MODELS.resolve(name);
        return p.toFile().isFile() ? p : MODELS.resolve("testdata/tiny-random").resolve(name);
    }

    static EngineConfig config(String name, int sequences) {
        return EngineConfig.defaults(model(name)).withThreads(2).withContextLength(256).withKvType(KvType.F32)
                .withMaxSequences(sequences).withMaxBatchTokens(64).withMaxQueue(512);
    }

    /** Collects one request's output. */
    static class Collect implements GenerationListener {
        final List<Integer> tokens = new ArrayList<>();
        final StringBuilder text = new StringBuilder();
        final CountDownLatch done = new CountDownLatch(1);
        volatile FinishReason reason;
        volatile Usage usage;
        volatile String message;

        @Override
        public void onToken(int choice, int tokenId, String t, TokenLogprobs logprobs) {
            tokens.add(tokenId);
            text.append(t);
        }

        @Override
        public void onText(int choice, String t) {
            text.append(t);
        }

        @Override
        public void onChoiceFinished(int choice, FinishReason r, Usage u, String m) {
            reason = r;
            usage = u;
            message = m;
            done.countDown();
        }

        int[] ids() {
            return tokens.stream().mapToInt(Integer::intValue).toArray();
        }

        Collect await() throws InterruptedException {
            assertTrue(done.await(60, TimeUnit.SECONDS), "request did not finish");
            return this;
        }
    }

    static GenerationRequest request(int[] prompt, int maxTokens, SamplingParams sampling) {
        return GenerationRequest.of(prompt, sampling, StopCondition.of(maxTokens)); // no stop ids: exact lengths
    }

    static long submit(InferenceEngine e, GenerationRequest r, Collect sink) {
        SubmitResult s = e.submit(r, sink);
        return assertInstanceOf(SubmitResult.Accepted.class, s).sequenceId();
    }

    static int[] generate(InferenceEngine e, int[] prompt, int maxTokens, SamplingParams sampling) throws Exception {
        Collect c = new Collect();
        submit(e, request(prompt, maxTokens, sampling), c);
        c.await();
        assertEquals(FinishReason.LENGTH, c.reason, c.message);
        return c.ids();
    }

    @ParameterizedTest
    @ValueSource(strings = {"stories260K.gguf", "tiny-llama-random-Q8_0.gguf"})
    void eightPromptsAtOnce_giveExactlyTheTokensEachGivesAlone(String name) throws Exception {
        int n = PROMPTS.size();
        int[][] prompts = new int[n][];
        int[][] alone = new int[n][];
        try (InferenceEngine e = EngineAssembly.open(config(name, 1))) {
            for (int i = 0; i < n; i++) {
                prompts[i] = e.tokenizer().encode(PROMPTS.get(i));
                alone[i] = generate(e, prompts[i], 20 + 3 * i, SamplingParams.greedy());
            }
        }
        try (InferenceEngine e = EngineAssembly.open(config(name, 8))) {
            Collect[] sinks = new Collect[n];
            for (int i = 0; i < n; i++) {
                sinks[i] = new Collect();
                submit(e, request(prompts[i], 20 + 3 * i, SamplingParams.greedy()), sinks[i]);
            }
            for (int i = 0; i < n; i++) {
                sinks[i].await();
                assertEquals(FinishReason.LENGTH, sinks[i].reason, sinks[i].message);
                assertArrayEquals(alone[i], sinks[i].ids(), name + ": prompt " + i + " batched differs from alone");
            }
            EngineStats s = e.stats();
            assertTrue(s.steps() < alone[n - 1].length * n, "requests ran one after another: " + s);
            assertEquals(0, s.kvBlocksUsed());
        }
    }

    @Test
    void repeatedPrompt_hitsThePrefixCache_prefillsOnlyTheSuffix_andGivesTheSameTokens() throws Exception {
        try (InferenceEngine e = EngineAssembly.open(config("stories260K.gguf", 2))) {
            int[] prompt = e.tokenizer().encode(PROMPTS.get(3) + " " + PROMPTS.get(1));
            assertTrue(prompt.length > 40, "prompt of " + prompt.length);
            EngineStats s0 = e.stats();
            int[] first = generate(e, prompt, 12, SamplingParams.greedy());
            EngineStats s1 = e.stats();
            assertEquals(prompt.length, s1.promptTokens() - s0.promptTokens());
            assertEquals(0, s1.prefixHitTokens() - s0.prefixHitTokens());
            assertEquals(12, s1.generatedTokens() - s0.generatedTokens());

            int[] second = generate(e, prompt, 12, SamplingParams.greedy());
            EngineStats s2 = e.stats();
            int cached = (prompt.length - 1) / InferenceEngine.KV_BLOCK_SIZE * InferenceEngine.KV_BLOCK_SIZE;
            assertTrue(cached >= 32);
            assertEquals(cached, s2.prefixHitTokens() - s1.prefixHitTokens(), "prefix hits");
            assertEquals(prompt.length - cached, s2.prefixMissTokens() - s1.prefixMissTokens(), "prefix misses");
            assertEquals(prompt.length - cached, s2.promptTokens() - s1.promptTokens(), "tokens prefilled the second time");
            assertArrayEquals(first, second);
            assertEquals(0, s2.kvBlocksUsed());
        }
    }

    @Test
    void chatLikePromptExtendingAnEarlierOne_reusesItsFullBlocks_andMatchesAFreshEngine() throws Exception {
        int[] turn1;
        int[] turn2;
        int[] answer1;
        int[] answer2;
        EngineStats before;
        EngineStats after;
        try (InferenceEngine e = EngineAssembly.open(config("stories260K.gguf", 2))) {
            turn1 = e.tokenizer().encode(PROMPTS.get(1));
            answer1 = generate(e, turn1, 30, SamplingParams.greedy());
            int[] more = e.tokenizer().encode(" Then Lily said", false, false);
            turn2 = concat(turn1, answer1, more);
            before = e.stats();
            answer2 = generate(e, turn2, 10, SamplingParams.greedy());
            after = e.stats();
        }
        // the first request computed its prompt and all but its last sampled token
        int shared = turn1.length + answer1.length - 1;
        int cached = shared / InferenceEngine.KV_BLOCK_SIZE * InferenceEngine.KV_BLOCK_SIZE;
        assertTrue(cached >= 32, "shared " + shared);
        assertEquals(cached, after.prefixHitTokens() - before.prefixHitTokens());
        assertEquals(turn2.length - cached, after.promptTokens() - before.promptTokens());
        try (InferenceEngine fresh = EngineAssembly.open(config("stories260K.gguf", 1))) {
            assertArrayEquals(generate(fresh, turn2, 10, SamplingParams.greedy()), answer2);
        }
    }

    static int[] concat(int[]... parts) {
        int n = 0;
        for (int[] p : parts) {
            n += p.length;
        }
        int[] r = new int[n];
        int o = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, r, o, p.length);
            o += p.length;
        }
        return r;
    }

    @Test
    void seededSampling_isReproducible_aloneOrInABatch_andTheSeedMatters() throws Exception {
        SamplingParams seeded = new SamplingParams(0.9f, new Truncation(40, 0.95f, 0f), RepetitionPenalties.NONE,
                LogitBias.NONE, 1234);
        SamplingParams otherSeed = new SamplingParams(0.9f, new Truncation(40, 0.95f, 0f), RepetitionPenalties.NONE,
                LogitBias.NONE, 99);
        try (InferenceEngine e = EngineAssembly.open(config("stories260K.gguf", 4))) {
            int[] prompt = e.tokenizer().encode(PROMPTS.get(0));
            int[] a = generate(e, prompt, 40, seeded);
            int[] b = generate(e, prompt, 40, seeded);
            assertArrayEquals(a, b, "same seed, same prompt, run twice");
            Collect mine = new Collect();
            Collect[] others = {new Collect(), new Collect(), new Collect()};
            for (int i = 0; i < others.length; i++) {
                submit(e, request(e.tokenizer().encode(PROMPTS.get(i + 4)), 30, otherSeed), others[i]);
            }
            submit(e, request(prompt, 40, seeded), mine);
            mine.await();
            for (Collect o : others) {
                o.await();
            }
            assertArrayEquals(a, mine.ids(), "same seed among other requests");
            assertFalse(java.util.Arrays.equals(a, generate(e, prompt, 40, otherSeed)), "another seed, same tokens");
        }
    }

    @Test
    void hundredsOfRequestsCancelledAtRandomPoints_leaveNoKvBlockInUse() throws Exception {
        SplittableRandom random = new SplittableRandom(20261129);
        int n = 240;
        try (InferenceEngine e = EngineAssembly.open(config("stories260K.gguf", 8))) {
            int[][] prompts = new int[PROMPTS.size()][];
            for (int i = 0; i < prompts.length; i++) {
                prompts[i] = e.tokenizer().encode(PROMPTS.get(i));
            }
            List<Collect> sinks = new ArrayList<>();
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int cancelAfter = random.nextInt(4) == 0 ? -1 : random.nextInt(12); // -1: never cancelled
                int maxTokens = 1 + random.nextInt(16);
                long[] id = new long[1];
                Collect c = new Collect() {
                    @Override
                    public void onToken(int choice, int tokenId, String t, TokenLogprobs logprobs) {
                        super.onToken(choice, tokenId, t, logprobs);
                        if (tokens.size() == cancelAfter) {
                            e.cancel(id[0]); // from the request's output thread, mid-stream
                        }
                    }
                };
                id[0] = submit(e, request(prompts[random.nextInt(prompts.length)], maxTokens, SamplingParams.greedy()), c);
                if (cancelAfter == 0 || random.nextInt(10) == 0) {
                    e.cancel(id[0]); // from this thread: queued, or anywhere
                }
                sinks.add(c);
                ids.add(id[0]);
            }
            int cancelled = 0;
            for (Collect c : sinks) {
                c.await();
                assertTrue(c.reason == FinishReason.CANCELLED || c.reason == FinishReason.LENGTH, c.reason + " " + c.message);
                cancelled += c.reason == FinishReason.CANCELLED ? 1 : 0;
            }
            // about 54% are asked to cancel before their length ends; output runs on each request's own thread, so a
            // cancel sent from onToken can land after a short request already finished by length (119 of 240 seen)
            assertTrue(cancelled >= n / 3, cancelled + " of " + n + " cancelled");
            EngineStats s = e.stats();
            assertEquals(0, s.kvBlocksUsed(), s.toString());
            assertEquals(0, s.running());
            assertEquals(0, s.queued());
            for (long id : ids) {
                assertFalse(e.cancel(id), "finished request " + id + " still cancellable");
            }
            assertArrayEquals(generate(e, prompts[0], 8, SamplingParams.greedy()),
                    generate(e, prompts[0], 8, SamplingParams.greedy()), "engine still works");
        }
    }

    @Test
    void close_finishesRequestsInFlightWithAnError_andLaterSubmissionsAreRejected() throws Exception {
        InferenceEngine e = EngineAssembly.open(config("stories260K.gguf", 2).withMaxSequences(1));
        assertTrue(e.ready());
        int[] prompt = e.tokenizer().encode(PROMPTS.get(0));
        Collect running = new Collect();
        Collect queued = new Collect();
        submit(e, request(prompt, 200, SamplingParams.greedy()), running);
        submit(e, request(prompt, 200, SamplingParams.greedy()), queued);
        e.close();
        assertFalse(e.ready());
        for (Collect c : List.of(running, queued)) {
            c.await();
            if (c.reason != FinishReason.LENGTH) { // the first one may have finished before close
                assertEquals(FinishReason.ERROR, c.reason);
                assertEquals("shutting down", c.message);
            }
        }
        assertEquals(FinishReason.ERROR, queued.reason);
        assertInstanceOf(SubmitResult.Rejected.class, e.submit(request(prompt, 4, SamplingParams.greedy()), new Collect()));
        e.close(); // twice is fine
    }

    @Test
    void promptLongerThanTheContext_isRejectedAtSubmit() throws Exception {
        try (InferenceEngine e = EngineAssembly.open(config("stories260K.gguf", 2).withContextLength(32))) {
            assertEquals(32, e.info().contextLength());
            int[] prompt = new int[30];
            java.util.Arrays.fill(prompt, 300);
            var ex = assertThrows(IllegalArgumentException.class, () -> e.submit(request(prompt, 8, SamplingParams.greedy()), new Collect()));
            assertTrue(ex.getMessage().contains("exceeds the context length 32"), ex.getMessage());
            assertEquals(0, e.stats().queued());
        }
    }

    @Test
    void infoAndId_describeTheModel() throws Exception {
        try (InferenceEngine e = EngineAssembly.open(EngineConfig.defaults(model("stories260K.gguf")).withThreads(1))) {
            assertEquals("stories260K", e.modelId());
            assertEquals("llama", e.info().architecture());
            assertEquals(512, e.info().vocabSize());
            assertEquals(2048, e.info().contextLength()); // the model's own
            assertTrue(e.info().parameters() > 200_000 && e.info().parameters() < 400_000, e.info().toString());
            assertEquals(4 * 2048 / InferenceEngine.KV_BLOCK_SIZE, e.stats().kvBlocksTotal());
            assertTrue(e.chatTemplate() != null);
        }
    }

    @Test
    void missingOrBrokenModelFile_isAnIOExceptionNamingIt() {
        var missing = assertThrows(java.io.IOException.class,
                () -> EngineAssembly.open(EngineConfig.defaults(Path.of("/nonexistent/m.gguf"))));
        assertTrue(missing.getMessage().contains("/nonexistent/m.gguf"), missing.getMessage());
        var notGguf = assertThrows(java.io.IOException.class,
                () -> EngineAssembly.open(EngineConfig.defaults(MODELS.resolve("testdata/SOURCES.md"))));
        assertTrue(notGguf.getMessage() != null && !notGguf.getMessage().isEmpty());
    }
}
