package ml.juno.embed;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.LogitBias;
import ml.juno.coordinator.sampling.RepetitionPenalties;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.sampling.Truncation;
import ml.juno.coordinator.engine.EmbeddingOutput;
import ml.juno.coordinator.scheduler.EmbeddingRequest;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.engine.embedding.Pooling;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.service.CollectedGeneration;
import ml.juno.coordinator.tokenizer.ChatMessage;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplates;

/**
 * Juno in your own JVM, as the old {@code JunoPlayer} facade offered: the in-process engine (scheduler, continuous
 * batching, the model's own chat template) without HTTP. Thread-safe: concurrent calls share the engine's batches.
 *
 * <pre>{@code
 * try (Juno juno = Juno.local(Path.of("models/stories260K.gguf")).temperature(0).maxTokens(48).build()) {
 *     System.out.println(juno.chat("Tell me a story"));
 *     juno.stream("Once upon a time").subscribe(...); // pieces of text as they are generated
 *     float[] v = juno.embed("Once upon a time");      // a unit vector of the model's hidden size
 * }
 * }</pre>
 *
 * The JVM needs {@code --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED} (as every Juno JVM).
 */
public final class Juno implements AutoCloseable {

    /** One message of a conversation: role {@code system}, {@code user} or {@code assistant}, and its text. */
    public record Message(String role, String content) {
        public static Message user(String content) {
            return new Message("user", content);
        }

        public static Message system(String content) {
            return new Message("system", content);
        }

        public static Message assistant(String content) {
            return new Message("assistant", content);
        }
    }

    /** Builds an in-process Juno; {@link #build()} loads the model. */
    public static final class Builder {
        private final Path model;
        private int threads;
        private int contextLength;
        private int maxTokens = 256;
        private double temperature = 0.8;
        private int topK;
        private double topP = 1;
        private Long seed;

        private Builder(Path model) {
            this.model = model;
        }

        /** Compute threads (default: all cores). */
        public Builder threads(int n) {
            this.threads = n;
            return this;
        }

        /** Context length in tokens (default: the model's, capped by the engine). */
        public Builder contextLength(int n) {
            this.contextLength = n;
            return this;
        }

        /** Tokens an answer may have at most (default 256). */
        public Builder maxTokens(int n) {
            this.maxTokens = n;
            return this;
        }

        /** 0 is greedy (default 0.8). */
        public Builder temperature(double t) {
            this.temperature = t;
            return this;
        }

        public Builder topK(int k) {
            this.topK = k;
            return this;
        }

        public Builder topP(double p) {
            this.topP = p;
            return this;
        }

        /** A fixed seed: the same answers for the same calls (default: a new seed each call). */
        public Builder seed(long s) {
            this.seed = s;
            return this;
        }

        /** Loads the model; fails with {@link IOException} for a file that cannot be served. */
        public Juno build() throws IOException {
            if (maxTokens < 1 || temperature < 0 || temperature > 2 || topK < 0 || topP <= 0 || topP > 1 || threads < 0 || contextLength < 0) {
                throw new IllegalArgumentException("bad settings: maxTokens >= 1, temperature 0..2, topK >= 0, topP in (0, 1], threads and context >= 0");
            }
            EngineConfig d = EngineConfig.defaults(model);
            EngineConfig c = new EngineConfig(model, threads > 0 ? threads : d.threads(), contextLength > 0 ? contextLength : d.contextLength(),
                    d.kvType(), d.kvBudgetBytes(), d.maxSequences(), d.maxBatchTokens(), d.maxQueue());
            return new Juno(EngineAssembly.open(c), this);
        }
    }

    /** An in-process Juno on the GGUF file {@code model}. */
    public static Builder local(Path model) {
        return new Builder(model);
    }

    private final InferenceEngine engine;
    private final Builder settings;

    private Juno(InferenceEngine engine, Builder settings) {
        this.engine = engine;
        this.settings = settings;
    }

    /** The model's id (its file name without {@code .gguf}). */
    public String model() {
        return engine.modelId();
    }

    /** The answer to one user message. */
    public String chat(String userMessage) {
        return chat(List.of(Message.user(userMessage)));
    }

    /** The assistant's answer to a conversation, rendered with the model's own chat template. */
    public String chat(List<Message> conversation) {
        CollectedGeneration collected = new CollectedGeneration(1, false);
        start(conversation, collected);
        CollectedGeneration.Choice answer;
        try {
            answer = collected.result().get().choices().get(0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
        if (answer.reason() == FinishReason.ERROR) {
            throw new IllegalStateException("the generation failed: " + answer.message());
        }
        return answer.text();
    }

    /** The answer to one user message, as pieces of text published as they are generated. */
    public Flow.Publisher<String> stream(String userMessage) {
        return stream(List.of(Message.user(userMessage)));
    }

    /**
     * The answer to a conversation as a publisher of text pieces: each subscriber starts its own generation, which ends
     * with {@code onComplete} (or {@code onError}); cancelling the subscription cancels the generation.
     */
    public Flow.Publisher<String> stream(List<Message> conversation) {
        return subscriber -> {
            SubmissionPublisher<String> pieces = new SubmissionPublisher<>();
            CompletableFuture<Void> done = new CompletableFuture<>();
            pieces.subscribe(subscriber);
            done.whenComplete((ok, error) -> {
                if (error != null) {
                    pieces.closeExceptionally(error);
                } else {
                    pieces.close();
                }
            });
            start(conversation, new Listener(done) {
                @Override
                void piece(String piece) {
                    if (!piece.isEmpty()) {
                        pieces.submit(piece);
                    }
                }
            });
        };
    }

    private void start(List<Message> conversation, GenerationListener listener) {
        if (conversation.isEmpty()) {
            throw new IllegalArgumentException("the conversation is empty");
        }
        List<ChatMessage> messages = new ArrayList<>();
        for (Message m : conversation) {
            messages.add(new ChatMessage(m.role(), m.content()));
        }
        int[] prompt = ChatTemplates.encodePrompt(engine.tokenizer(), engine.chatTemplate().render(new ChatRequest(messages, true)));
        int room = engine.info().contextLength() - prompt.length;
        if (room < 1) {
            throw new IllegalArgumentException("the conversation (" + prompt.length + " tokens) does not fit the context of "
                    + engine.info().contextLength() + " tokens");
        }
        long seed = settings.seed != null ? settings.seed : System.nanoTime();
        SamplingParams sampling = settings.temperature == 0 ? SamplingParams.greedy()
                : new SamplingParams((float) settings.temperature, new Truncation(settings.topK, (float) settings.topP, 0f),
                        RepetitionPenalties.NONE, LogitBias.NONE, seed);
        StopCondition stop = StopCondition.of(Math.min(settings.maxTokens, room), engine.tokenizer().endOfGenerationIds());
        SubmitResult r = engine.submit(new GenerationRequest(prompt, sampling, stop, 0, -1), listener);
        if (r instanceof SubmitResult.Rejected rejected) {
            throw new IllegalStateException("the engine is busy: " + rejected.reason());
        }
    }

    /**
     * The embedding of {@code text}: the model's final hidden states, pooled as its GGUF declares ({@code mean} when it
     * declares nothing) and L2-normalised, as {@code POST /v1/embeddings} gives it (the same scheduler path).
     */
    public float[] embed(String text) {
        return embed(List.of(text)).get(0);
    }

    /** The embeddings of {@code texts}, in order; they share the engine's steps (see {@link #embed(String)}). */
    public List<float[]> embed(List<String> texts) {
        if (texts.isEmpty()) {
            throw new IllegalArgumentException("nothing to embed");
        }
        Pooling pooling = engine.pooling();
        if (pooling == Pooling.NONE) {
            throw new UnsupportedOperationException("the model declares pooling none: one vector per token, none per text");
        }
        for (int i = 0; i < texts.size(); i++) {
            if (texts.get(i).isEmpty()) {
                throw new IllegalArgumentException("text " + i + " is empty");
            }
        }
        EmbeddingOutput out = engine.newEmbeddings();
        for (String text : texts) {
            if (out.submit(new EmbeddingRequest(engine.tokenizer().encode(text), pooling, 0)) instanceof SubmitResult.Rejected r) {
                throw new IllegalStateException("the engine is busy: " + r.reason());
            }
        }
        try {
            return out.await().vectors();
        } catch (InterruptedException e) {
            out.cancel();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while embedding", e);
        }
    }

    /** Floats per embedding: the model's hidden size. */
    public int embeddingLength() {
        return engine.embeddingLength();
    }

    /** Stops the engine and unmaps the model; generations in flight end with an error. */
    @Override
    public void close() {
        engine.close();
    }

    /** Text pieces to {@link #piece}, the end to {@code done}. */
    private abstract static class Listener implements GenerationListener {
        private final CompletableFuture<Void> done;
        private FinishReason reason = FinishReason.ERROR;
        private String message = "";

        Listener(CompletableFuture<Void> done) {
            this.done = done;
        }

        abstract void piece(String piece);

        @Override
        public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
            piece(text);
        }

        @Override
        public void onText(int choice, String text) {
            piece(text);
        }

        @Override
        public void onChoiceFinished(int choice, FinishReason r, Usage usage, String m) {
            reason = r;
            message = m;
        }

        @Override
        public void onFinished(Usage usage) {
            if (reason == FinishReason.ERROR) {
                done.completeExceptionally(new IllegalStateException("the generation failed: " + message));
            } else {
                done.complete(null);
            }
        }
    }
}
