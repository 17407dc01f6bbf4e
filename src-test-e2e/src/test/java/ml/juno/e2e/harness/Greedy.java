package ml.juno.e2e.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;

/** Greedy generation through an engine's scheduler and executor (EOS does not stop it): the token ids. */
public final class Greedy {
    private Greedy() {
    }

    public static List<Integer> tokens(InferenceEngine engine, String prompt, int n) throws Exception {
        return tokens(engine, prompt, n, 0);
    }

    /** {@link #tokens(InferenceEngine, String, int)} computed with the engine's named LoRA adapter {@code adapter} (0: none). */
    public static List<Integer> tokens(InferenceEngine engine, String prompt, int n, int adapter) throws Exception {
        return sampled(engine, prompt, n, SamplingParams.greedy(), adapter);
    }

    /** The token ids of {@code n} tokens sampled with {@code params} (e.g. seeded), EOS not stopping it. */
    public static List<Integer> sampled(InferenceEngine engine, String prompt, int n, SamplingParams params) throws Exception {
        return sampled(engine, prompt, n, params, 0);
    }

    private static List<Integer> sampled(InferenceEngine engine, String prompt, int n, SamplingParams params, int adapter) throws Exception {
        int[] ids = engine.tokenizer().encode(prompt);
        List<Integer> out = new ArrayList<>();
        CompletableFuture<String> done = new CompletableFuture<>();
        SubmitResult r = engine.submit(new GenerationRequest(ids, params, StopCondition.of(n), 0, -1, adapter), new GenerationListener() {
            @Override
            public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
                out.add(tokenId);
            }

            @Override
            public void onChoiceFinished(int choice, FinishReason reason, Usage usage, String message) {
                done.complete(reason == FinishReason.ERROR ? "ERROR " + message : reason.name());
            }
        });
        if (!(r instanceof SubmitResult.Accepted)) {
            throw new IllegalStateException("not accepted: " + r);
        }
        String reason = done.get(60, TimeUnit.SECONDS);
        if (reason.startsWith("ERROR")) {
            throw new IllegalStateException(reason);
        }
        return out;
    }
}
