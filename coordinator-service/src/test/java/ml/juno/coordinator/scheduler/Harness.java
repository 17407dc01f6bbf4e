package ml.juno.coordinator.scheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.engine.SamplingStage;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;

/**
 * Drives a scheduler against the {@link FakeEngine} test double (its logits sampled by a {@link SamplingStage}, as an
 * executor does) and records what comes out.
 */
final class Harness {
    final Scheduler scheduler;
    final KvCacheManager kv;
    final FakeEngine engine;
    final SamplingStage sampling; // what an executor does with the fake's logits
    final Map<Long, List<Integer>> tokens = new HashMap<>();
    final Map<Long, FinishedSequence> finished = new HashMap<>();
    final List<StepPlan> plans = new ArrayList<>();
    final Map<Long, List<PromptScores>> scores = new HashMap<>();

    Harness(int vocab, int budget, int maxRunning, int maxWaiting, KvCacheConfig kvConfig) {
        this(vocab, budget, maxRunning, maxWaiting, kvConfig, SchedulerConfig.defaultQuantumSteps());
    }

    /** With a fairness quantum of {@code quantumSteps} (0: off). */
    Harness(int vocab, int budget, int maxRunning, int maxWaiting, KvCacheConfig kvConfig, int quantumSteps) {
        this.kv = new KvCacheManager(kvConfig);
        int maxLen = (int) Math.min(4096, kvConfig.capacityTokens());
        this.scheduler = new Scheduler(new SchedulerConfig(budget, maxRunning, maxWaiting, maxLen, Duration.ofSeconds(2),
                quantumSteps), kv, vocab);
        this.sampling = new SamplingStage(vocab);
        this.engine = new FakeEngine(vocab, budget, kvConfig.numBlocks(), kvConfig.blockSize());
    }

    static Harness small() {
        return new Harness(32, 16, 8, 64, new KvCacheConfig(4, 64));
    }

    long submit(int[] prompt, SamplingParams sampling, StopCondition stop, int priority) {
        return submit(new GenerationRequest(prompt, sampling, stop, priority, -1));
    }

    long submit(GenerationRequest request) {
        return submit(request, null);
    }

    long submit(GenerationRequest request, Object group) {
        var result = scheduler.submit(request, group);
        if (!(result instanceof SubmitResult.Accepted a)) {
            throw new AssertionError("rejected: " + result);
        }
        engine.expect(a.sequenceId(), request.promptTokens(), request.stop().maxTokens());
        tokens.put(a.sequenceId(), new ArrayList<>());
        return a.sequenceId();
    }

    StepPlan step() {
        StepPlan plan = scheduler.schedule();
        plans.add(plan);
        StepOutcome outcome = scheduler.update(plan, execute(plan));
        engine.observe(outcome);
        for (PromptScores s : outcome.scores()) {
            if (tokens.get(s.sequenceId()) != null && !tokens.get(s.sequenceId()).isEmpty()) {
                throw new AssertionError("prompt scores after the first token: " + s);
            }
            scores.computeIfAbsent(s.sequenceId(), k -> new ArrayList<>()).add(s);
        }
        for (SampledToken t : outcome.tokens()) {
            tokens.get(t.sequenceId()).add(t.tokenId());
        }
        for (FinishedSequence f : outcome.finished()) {
            if (finished.put(f.sequenceId(), f) != null) {
                throw new AssertionError("finished twice: " + f);
            }
        }
        return plan;
    }

    /** The fake's logits for {@code plan}, sampled. */
    StepResult execute(StepPlan plan) {
        float[] logits = engine.execute(plan);
        return sampling.sample(plan, logits, plan.logitRowCount());
    }

    void runToEnd(int maxSteps) {
        for (int i = 0; i < maxSteps && scheduler.hasWork(); i++) {
            step();
        }
        if (scheduler.hasWork()) {
            throw new AssertionError("still busy after " + maxSteps + " steps");
        }
    }

    static int[] prompt(int seed, int n, int vocab) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = Math.floorMod(seed * 7 + i * 13 + i * i, vocab);
        }
        return p;
    }
}
