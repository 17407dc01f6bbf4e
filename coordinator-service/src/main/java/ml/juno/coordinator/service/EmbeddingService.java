package ml.juno.coordinator.service;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import ml.juno.coordinator.api.ApiGate;
import ml.juno.coordinator.engine.EmbeddingOutput;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.scheduler.EmbeddingRequest;
import ml.juno.coordinator.scheduler.RequestLimitException;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.engine.embedding.Pooling;

/**
 * {@code /v1/embeddings} behind the HTTP edge: checks what the model can give (a pooling that yields one vector, the
 * requested size), tokenizes each input with the model's BOS rule, and submits the
 * inputs as one request of prefill-only sequences that the scheduler batches with everything else. The scheduler's
 * refusals come back naming the input. Runs on a request thread.
 */
@ApplicationScoped
public class EmbeddingService {
    /** Most inputs in one request (OpenAI's limit). */
    public static final int MAX_INPUTS = 2048;

    private final GenerationService generation;
    private final ApiGate gate;

    EmbeddingService(GenerationService generation, ApiGate gate) {
        this.generation = generation;
        this.gate = gate;
    }

    /** The vectors of {@code inputs} in order, and the tokens they took. */
    public EmbeddingOutput.Result embed(ServedModel served, List<PromptInput> inputs, Integer dimensions) {
        return finish(start(served, inputs, dimensions));
    }

    /** Embeddings queued and running: {@link #finish} waits for them, {@link #cancel} drops them (a client went away). */
    public record Pending(EmbeddingOutput output, String key) {
        public void cancel() {
            output.cancel();
        }
    }

    /**
     * Checks and queues {@code inputs} (on the request's thread: the API key is read from it); refusals are thrown
     * here, before anything runs.
     */
    public Pending start(ServedModel served, List<PromptInput> inputs, Integer dimensions) {
        if (served.adapter() != 0) {
            throw new InvalidRequestException("model", "embeddings come from the base model; '" + served.id()
                    + "' is a LoRA adapter");
        }
        InferenceEngine engine = served.engine();
        int[][] tokens = check(served, inputs, dimensions);
        Pooling pooling = pooling(engine);
        String key = gate.currentKey();
        EmbeddingOutput out = engine.newEmbeddings().forKey(key);
        for (int i = 0; i < tokens.length; i++) {
            SubmitResult r;
            try {
                r = out.submit(new EmbeddingRequest(tokens[i], pooling, 0));
            } catch (RequestLimitException e) {
                throw switch (e.part()) {
                    case PROMPT_LENGTH -> new InvalidRequestException("input", "input[" + i + "] is " + e.value()
                            + " tokens; this model's maximum context length is " + e.limit() + " tokens");
                    case PROMPT_TOKEN -> new InvalidRequestException("input", "input[" + i + "] has token id " + e.value()
                            + ", outside the vocabulary [0, " + e.limit() + ")");
                    default -> new InvalidRequestException("input", "input[" + i + "]: " + e.getMessage());
                };
            }
            if (r instanceof SubmitResult.Rejected rejected) {
                throw new EngineBusyException(rejected.retryAfter(), "The server is busy: " + rejected.reason()
                        + ". Please retry later.");
            }
        }
        return new Pending(out, key);
    }

    /** Waits for what {@link #start} queued: the vectors in input order and the tokens they took. */
    public EmbeddingOutput.Result finish(Pending pending) {
        EmbeddingOutput out = pending.output();
        try {
            EmbeddingOutput.Result result = out.await();
            gate.used(pending.key(), new Usage(result.promptTokens(), 0, 0));
            return result;
        } catch (InterruptedException e) {
            out.cancel();
            Thread.currentThread().interrupt();
            throw new EngineNotReadyException("interrupted while embedding");
        } catch (EmbeddingOutput.EmbeddingFailedException e) {
            if (e.getMessage().equals("shutting down")) {
                throw new EngineNotReadyException("The server is shutting down");
            }
            throw new IllegalStateException("embedding failed: " + e.getMessage(), e);
        }
    }

    private static Pooling pooling(InferenceEngine engine) {
        Pooling p;
        try {
            p = engine.pooling();
        } catch (IllegalArgumentException e) {
            throw new NotSupportedException("This model cannot give embeddings: " + e.getMessage());
        }
        if (p == Pooling.NONE) {
            throw new NotSupportedException("This model declares pooling_type none (one vector per token), which has no "
                    + "single embedding per input; /v1/embeddings needs mean, cls or last pooling");
        }
        return p;
    }

    private static int[][] check(ServedModel served, List<PromptInput> inputs, Integer dimensions) {
        InferenceEngine engine = served.engine();
        if (dimensions != null && dimensions != engine.embeddingLength()) {
            throw new InvalidRequestException("dimensions", "This model's embeddings have " + engine.embeddingLength()
                    + " dimensions and cannot be shortened; dimensions " + dimensions + " is not supported");
        }
        if (inputs.isEmpty()) {
            throw new InvalidRequestException("input", "input must not be empty");
        }
        if (inputs.size() > MAX_INPUTS) {
            throw new InvalidRequestException("input", inputs.size() + " inputs in one request; at most " + MAX_INPUTS);
        }
        int context = engine.info().contextLength();
        int[][] tokens = new int[inputs.size()][];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = switch (inputs.get(i)) {
                case PromptInput.Text t when t.text().isEmpty() -> throw new InvalidRequestException("input",
                        "input[" + i + "] is an empty string");
                case PromptInput.Text t when t.text().length() > (long) context * served.maxPieceBytes() -> throw new InvalidRequestException(
                        "input", "input[" + i + "] has " + t.text().length() + " characters, more than this model's "
                        + "maximum context length of " + context + " tokens can hold");
                case PromptInput.Text t -> engine.tokenizer().encode(t.text());
                case PromptInput.Tokens ids -> ids.ids();
                case PromptInput.Chat c -> throw new InvalidRequestException("input", "input[" + i + "] is a chat");
            };
            if (tokens[i].length == 0) {
                throw new InvalidRequestException("input", "input[" + i + "] has no tokens");
            }
        }
        return tokens;
    }
}
