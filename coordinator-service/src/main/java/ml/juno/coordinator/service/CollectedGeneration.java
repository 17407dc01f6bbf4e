package ml.juno.coordinator.service;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;

/**
 * A {@link GenerationListener} that gathers whole choices for a non-streaming response and completes
 * {@link #result()} when the last choice is over.
 */
public final class CollectedGeneration implements GenerationListener {

    /**
     * One finished choice.
     *
     * @param logprobs one entry per generated token when log-probabilities were asked for, else empty
     * @param message  the engine's message when {@code reason} is ERROR, else empty
     * @param promptLogprobs the prompt's tokens' log-probabilities when they were asked for (echo), else empty
     */
    public record Choice(int index, String text, FinishReason reason, String message, List<TokenLogprobs> logprobs,
                         List<TokenLogprobs> promptLogprobs) {
    }

    /** All choices, in index order, and the request's usage. */
    public record Result(List<Choice> choices, Usage usage) {
        /** The first failed choice, if any. */
        public java.util.Optional<Choice> failure() {
            return choices.stream().filter(c -> c.reason() == FinishReason.ERROR).findFirst();
        }
    }

    private final StringBuilder[] texts;
    private final List<List<TokenLogprobs>> logprobs;
    private final Choice[] done;
    private final List<List<TokenLogprobs>> promptLogprobs;
    private final boolean keepLogprobs;
    private final CompletableFuture<Result> result = new CompletableFuture<>();

    public CollectedGeneration(int n, boolean keepLogprobs) {
        this.texts = new StringBuilder[n];
        this.done = new Choice[n];
        this.keepLogprobs = keepLogprobs;
        this.logprobs = new ArrayList<>(n);
        this.promptLogprobs = new ArrayList<>(java.util.Collections.nCopies(n, List.of()));
        for (int i = 0; i < n; i++) {
            texts[i] = new StringBuilder();
            logprobs.add(new ArrayList<>());
        }
    }

    public CompletableFuture<Result> result() {
        return result;
    }

    @Override
    public void onPromptLogprobs(int choice, List<TokenLogprobs> lp) {
        promptLogprobs.set(choice, List.copyOf(lp));
    }

    @Override
    public void onToken(int choice, int tokenId, String text, TokenLogprobs lp) {
        texts[choice].append(text);
        if (keepLogprobs) {
            logprobs.get(choice).add(lp);
        }
    }

    @Override
    public void onText(int choice, String text) {
        texts[choice].append(text);
    }

    @Override
    public void onChoiceFinished(int choice, FinishReason reason, Usage usage, String message) {
        done[choice] = new Choice(choice, texts[choice].toString(), reason, message, List.copyOf(logprobs.get(choice)),
                promptLogprobs.get(choice));
    }

    @Override
    public void onFinished(Usage usage) {
        result.complete(new Result(List.of(done), usage));
    }
}
