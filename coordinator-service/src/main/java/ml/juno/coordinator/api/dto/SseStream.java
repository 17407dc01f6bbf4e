package ml.juno.coordinator.api.dto;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.operators.multi.processors.UnicastProcessor;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;

/**
 * Streams a generation as SSE frames: for chats a role chunk per choice first, then content chunks, a finish
 * chunk per choice, the usage chunk when asked for, and {@code [DONE]}. If a choice fails, the stream ends
 * with an error event and {@code [DONE]}. Frames are buffered until the HTTP layer subscribes.
 */
public final class SseStream implements GenerationListener {

    private final ChunkFormat format;
    private final boolean chat;
    private final boolean includeUsage;
    private final int[] textOffsets;
    private final UnicastProcessor<String> frames = UnicastProcessor.create();
    private String error;

    public SseStream(ChunkFormat format, boolean chat, int choices, boolean includeUsage) {
        this.format = format;
        this.chat = chat;
        this.includeUsage = includeUsage;
        this.textOffsets = new int[choices];
    }

    /** Writes the opening chunks; call before the generation starts. */
    public SseStream open() {
        if (chat) {
            for (int i = 0; i < textOffsets.length; i++) {
                frames.onNext(format.role(i));
            }
        }
        return this;
    }

    /** The frames, for one subscriber; cancelling it (the client hung up) runs {@code onCancel}. */
    public Multi<String> frames(Runnable onCancel) {
        return frames.onCancellation().invoke(onCancel);
    }

    @Override
    public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
        if (logprobs != null && logprobs.tokenId() >= 0) {
            frames.onNext(format.content(choice, text, logprobs, textOffsets[choice]));
        } else if (!text.isEmpty()) {
            frames.onNext(format.content(choice, text));
        }
        textOffsets[choice] += text.length();
    }

    @Override
    public void onText(int choice, String text) {
        if (!text.isEmpty()) {
            frames.onNext(format.content(choice, text));
            textOffsets[choice] += text.length();
        }
    }

    @Override
    public void onChoiceFinished(int choice, FinishReason reason, Usage usage, String message) {
        switch (reason) {
            case ERROR -> {
                if (error == null) {
                    error = message;
                }
            }
            case CANCELLED -> {
                // the client is gone, or another choice failed: nothing useful to say for this one
            }
            default -> frames.onNext(format.finish(choice, reason));
        }
    }

    @Override
    public void onFinished(Usage usage) {
        if (error != null) {
            frames.onNext(format.error(ErrorResponse.of("The model failed while generating: " + error, ErrorTypes.SERVER, null, "generation_failed")));
        } else if (includeUsage) {
            frames.onNext(format.usage(usage));
        }
        frames.onNext(ChunkFormat.DONE);
        frames.onComplete();
    }
}
