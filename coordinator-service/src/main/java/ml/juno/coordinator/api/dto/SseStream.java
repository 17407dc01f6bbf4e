package ml.juno.coordinator.api.dto;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.operators.multi.processors.UnicastProcessor;
import java.util.List;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.tools.ToolCall;
import ml.juno.coordinator.tools.ToolCallStream;
import ml.juno.coordinator.tools.ToolOutput;

/**
 * Streams a generation as SSE frames: for chats a role chunk per choice first, then content chunks, a finish
 * chunk per choice, the usage chunk when asked for, and {@code [DONE]}. If a choice fails, the stream ends
 * with an error event and {@code [DONE]}. Frames are buffered until the HTTP layer takes them, at most
 * {@link #MAX_PENDING_FRAMES}: a client that stops reading (its socket full, so the HTTP layer stops asking for frames)
 * is cut off there, its generation cancelled and its connection closed, instead of its output piling up in memory.
 */
public final class SseStream implements GenerationListener {

    private final ChunkFormat format;
    private final boolean chat;
    private final boolean includeUsage;
    private final int[] textOffsets;
    /** Frames produced but not yet taken by the HTTP layer, at most (a frame is one chunk: ~100-400 bytes). */
    public static final int MAX_PENDING_FRAMES = 4096;

    private final UnicastProcessor<String> frames = UnicastProcessor.create();
    private final java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger();
    private final int maxPending;
    private volatile boolean cutOff;
    private String error;
    private List<String> echo;  // completions' echo: the text of each prompt, or null
    private int perPrompt = 1;
    private boolean echoLogprobs;
    /** Per choice, when the answer is read for tool calls; null otherwise. */
    private ToolCallStream[] toolStreams;
    private ToolMapping.Plan tools;
    /** Characters of a streamed call's arguments per chunk. */
    static final int ARGUMENT_PIECE = 24;

    public SseStream(ChunkFormat format, boolean chat, int choices, boolean includeUsage) {
        this(format, chat, choices, includeUsage, MAX_PENDING_FRAMES);
    }

    /** As above, cutting the client off past {@code maxPending} frames it has not taken. */
    public SseStream(ChunkFormat format, boolean chat, int choices, boolean includeUsage, int maxPending) {
        this.maxPending = maxPending;
        this.format = format;
        this.chat = chat;
        this.includeUsage = includeUsage;
        this.textOffsets = new int[choices];
    }

    /**
     * Completions' {@code echo}: choice {@code i} starts with the text of prompt {@code i / perPrompt}, sent first (with
     * the prompt's log-probabilities once they arrive, when {@code logprobs}); {@code texts} null: no echo.
     */
    public SseStream echo(List<String> texts, int perPrompt, boolean logprobs) {
        this.echo = texts;
        this.perPrompt = perPrompt;
        this.echoLogprobs = logprobs;
        return this;
    }

    /** Writes the opening chunks; call before the generation starts. */
    public SseStream open() {
        if (chat) {
            for (int i = 0; i < textOffsets.length; i++) {
                emit(format.role(i));
            }
        }
        if (echo != null && !echoLogprobs) {
            for (int i = 0; i < textOffsets.length; i++) {
                String text = echo.get(i / perPrompt);
                emit(format.echo(i, text, null));
                textOffsets[i] += text.length();
            }
        }
        return this;
    }

    @Override
    public void onPromptLogprobs(int choice, List<TokenLogprobs> logprobs) {
        if (echo != null && echoLogprobs) {
            String text = echo.get(choice / perPrompt);
            emit(format.echo(choice, text, LogprobsMapping.echo(logprobs, format.tokenizer(), text)));
            textOffsets[choice] += text.length();
        }
    }

    /**
     * Reads each choice for tool calls ({@code plan.parses()}): content that cannot be a call streams as it comes, a
     * call goes out when its choice ends, as {@code tool_calls} deltas, and the choice finishes with {@code tool_calls}.
     */
    public SseStream withTools(ToolMapping.Plan plan) {
        if (plan != null && plan.parses()) {
            tools = plan;
            toolStreams = new ToolCallStream[textOffsets.length];
            for (int i = 0; i < toolStreams.length; i++) {
                toolStreams[i] = new ToolCallStream(plan.syntax());
            }
        }
        return this;
    }

    /** The frames, for one subscriber; cancelling it (the client hung up) runs {@code onCancel}. */
    public Multi<String> frames(Runnable onCancel) {
        return frames.onItem().invoke(pending::decrementAndGet).onCancellation().invoke(onCancel);
    }

    /** Whether this stream was cut off because its client stopped reading. */
    public boolean cutOff() {
        return cutOff;
    }

    private void emit(String frame) {
        if (cutOff) {
            return;
        }
        if (pending.incrementAndGet() > maxPending) {
            cutOff = true;
            frames.onError(new SlowClientException(maxPending));
            throw new SlowClientException(maxPending); // the listener failing cancels the generation
        }
        frames.onNext(frame);
    }

    /** The client took none of the last {@code n} frames: it is cut off. */
    public static final class SlowClientException extends RuntimeException {
        SlowClientException(int n) {
            super("the client stopped reading: " + n + " frames unread", null, false, false);
        }
    }

    @Override
    public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
        if (toolStreams != null) {
            onText(choice, text);
            return;
        }
        if (logprobs != null && logprobs.tokenId() >= 0) {
            emit(format.content(choice, text, logprobs, textOffsets[choice]));
        } else if (!text.isEmpty()) {
            emit(format.content(choice, text));
        }
        textOffsets[choice] += text.length();
    }

    @Override
    public void onText(int choice, String text) {
        if (toolStreams != null) {
            text = toolStreams[choice].feed(text);
        }
        if (!text.isEmpty()) {
            emit(format.content(choice, text));
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
            default -> {
                if (toolStreams != null) {
                    finishWithTools(choice, reason);
                } else {
                    emit(format.finish(choice, reason));
                }
            }
        }
    }

    private void finishWithTools(int choice, FinishReason reason) {
        ToolCallStream.End end = toolStreams[choice].finish();
        if (!end.content().isEmpty()) {
            emit(format.content(choice, end.content()));
        }
        ToolOutput out = tools.parallel() ? end.output() : end.output().firstCallOnly();
        for (int i = 0; i < out.calls().size(); i++) {
            ToolCall call = out.calls().get(i);
            emit(format.toolCall(choice, i, call.id(), call.name(), ""));
            String args = call.arguments();
            for (int at = 0; at < args.length(); ) {
                int to = Math.min(args.length(), at + ARGUMENT_PIECE);
                if (to < args.length() && Character.isHighSurrogate(args.charAt(to - 1))) {
                    to++; // never split a character
                }
                emit(format.toolCall(choice, i, null, null, args.substring(at, to)));
                at = to;
            }
        }
        emit(format.finish(choice, Replies.finishReason(reason, out)));
    }

    @Override
    public void onFinished(Usage usage) {
        if (error != null && ml.juno.coordinator.engine.RequestOutput.timedOut(error)) {
            emit(format.error(ErrorResponse.of("Request timed out: " + error + " (--request-timeout).", ErrorTypes.SERVER, null,
                    "request_timeout")));
        } else if (error != null) {
            emit(format.error(ErrorResponse.of("The model failed while generating: " + error, ErrorTypes.SERVER, null, "generation_failed")));
        } else if (includeUsage) {
            emit(format.usage(usage));
        }
        emit(ChunkFormat.DONE);
        if (!cutOff) {
            frames.onComplete();
        }
    }
}
