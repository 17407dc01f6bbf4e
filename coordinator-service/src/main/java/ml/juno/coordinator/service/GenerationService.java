package ml.juno.coordinator.service;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import ml.juno.coordinator.api.ApiGate;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.grammar.Grammar;
import ml.juno.coordinator.grammar.GrammarConstraint;
import ml.juno.coordinator.grammar.TokenTrie;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.engine.RequestOutput;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.RequestLimitException;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplateException;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.coordinator.tokenizer.Tokenizer;

/**
 * Turns one API request into engine requests: checks the model name, renders and tokenizes the prompt, fits
 * the token budget into the context, and submits one sequence per choice (choice {@code i} seeded with
 * {@code seed + i}; the choices share the prompt's prefix cache). Runs on a request thread, never on the
 * event loop: templating and tokenizing are CPU work.
 */
@ApplicationScoped
public class GenerationService {

    private final EngineProducer engines;
    private final EngineMetrics metrics;
    private final ApiGate gate;
    private final java.time.Duration requestTimeout;

    GenerationService(EngineProducer engines, EngineMetrics metrics, ApiGate gate,
                      @org.eclipse.microprofile.config.inject.ConfigProperty(name = "juno.api.request-timeout", defaultValue = "0s")
                      java.time.Duration requestTimeout) {
        this.engines = engines;
        this.metrics = metrics;
        this.gate = gate;
        if (requestTimeout.isNegative()) {
            throw new IllegalArgumentException("juno.api.request-timeout must be >= 0 (0: none), got " + requestTimeout);
        }
        this.requestTimeout = requestTimeout;
    }

    /** The time limit of one generation request from its arrival ({@code juno.api.request-timeout}); zero: none. */
    public java.time.Duration requestTimeout() {
        return requestTimeout;
    }

    /** The served model if {@code model} names it or is null (omitted: the old API's habit); 404 otherwise, 503 while none is ready. */
    public ServedModel model(String model) {
        ServedModel served = engines.require();
        if (model == null || served.id().equals(model)) { // no model named: the one this server serves
            return served;
        }
        ServedModel adapter = served.adapter(model);
        if (adapter == null) {
            throw new UnknownModelException(model);
        }
        return adapter;
    }

    /**
     * Starts generating with {@code served} (from {@link #model}); output goes to {@code listener}, on the
     * request's own output thread. The returned request cancels every choice at once (the client went away).
     *
     * @throws InvalidRequestException  the prompt or the options cannot be served
     * @throws EngineBusyException      the queue is full
     */
    public RequestOutput start(ServedModel served, PromptInput prompt, GenerationOptions options, RequestKind kind,
                            GenerationListener listener) {
        return start(served, List.of(prompt), options, kind, listener);
    }

    /**
     * As {@link #start(ServedModel, PromptInput, GenerationOptions, RequestKind, GenerationListener)} for several prompts
     * (a completions prompt array), submitted together so they share steps: choice {@code p * n + i} is choice {@code i}
     * of prompt {@code p}, and the usage counts every prompt's tokens.
     */
    public RequestOutput start(ServedModel served, List<PromptInput> prompts, GenerationOptions options, RequestKind kind,
                               GenerationListener listener) {
        long arrived = System.nanoTime();
        InferenceEngine engine = served.engine();
        Tokenizer tokenizer = engine.tokenizer();
        String promptParam = prompts.getFirst() instanceof PromptInput.Chat ? "messages" : "prompt";
        int context = engine.info().contextLength();
        List<GenerationRequest> choices = new ArrayList<>(prompts.size() * options.n());
        SamplingParams s = options.grammar() == null ? options.sampling()
                : options.sampling().withGrammar(constraint(tokenizer, options.grammar()));
        for (PromptInput prompt : prompts) {
            int[] tokens = tokenize(served, prompt, promptParam, context);
            // Not a check (the scheduler makes the one check of length and vocabulary): without max_tokens a choice may
            // fill the context; a max_tokens up to the context is a cap that the room the prompt leaves may shorten; one
            // beyond the context goes as it is, for the scheduler to refuse. A prompt that leaves no room asks for one
            // token, which the scheduler refuses as a prompt too long.
            int room = Math.max(1, context - tokens.length);
            int asked = options.maxTokens();
            int maxTokens = asked == 0 ? room : asked > context ? asked : Math.min(asked, room);
            StopCondition stop = new StopCondition(maxTokens, 0, tokenizer.endOfGenerationIds(), stopStrings(engine, prompt, options));
            for (int i = 0; i < options.n(); i++) {
                SamplingParams seeded = s.withSeed(s.seed() + i);
                choices.add(new GenerationRequest(tokens, seeded, stop, options.priority(), options.logprobs(), served.adapter(),
                        options.promptLogprobs()));
            }
        }
        String key = gate.currentKey();
        RequestOutput request = engine.newRequest(charged(key, listener), metrics.forKind(kind)).forKey(key)
                .deadline(requestTimeout, arrived);
        SubmitResult result;
        try {
            result = engine.submit(request, choices, options.n());
        } catch (RequestLimitException e) {
            throw invalid(e, promptParam);
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException(null, e.getMessage());
        }
        metrics.started(kind);
        if (result instanceof SubmitResult.Rejected r) {
            metrics.rejected(kind);
            throw new EngineBusyException(r.retryAfter(), "The server is busy: " + r.reason() + ". Please retry later.");
        }
        return request;
    }

    /**
     * {@code grammar} bound to the tokenizer's vocabulary: the token trie is built on the first constrained request
     * and kept with the tokenizer; the end-of-generation tokens are allowed where the grammar accepts.
     */
    public static GrammarConstraint constraint(Tokenizer tokenizer, Grammar grammar) {
        TokenTrie trie = TokenTrie.cached(tokenizer, tokenizer.size(), id -> tokenizer.pieceBytes(id, false));
        return new GrammarConstraint(grammar, trie, tokenizer.endOfGenerationIds());
    }

    /** The scheduler's refusal in the API's words, naming the request field at fault. */
    private static InvalidRequestException invalid(RequestLimitException e, String promptParam) {
        return switch (e.part()) {
            case PROMPT_LENGTH -> new InvalidRequestException(promptParam, "This model's maximum context length is "
                    + e.limit() + " tokens. However, your prompt is " + e.value() + " tokens.");
            case MAX_TOKENS -> new InvalidRequestException("max_tokens", "max_tokens is too large: " + e.value()
                    + ". This model supports at most " + e.limit() + " tokens (prompt and completion).");
            case PROMPT_TOKEN -> new InvalidRequestException(promptParam, "token id " + e.value()
                    + " is outside the vocabulary [0, " + e.limit() + ")");
            case LOGIT_BIAS_TOKEN -> new InvalidRequestException("logit_bias", "logit_bias names token " + e.value()
                    + ", but the vocabulary has " + e.limit() + " tokens");
            case STOP_TOKEN -> new InvalidRequestException(null, e.getMessage());
        };
    }

    /** {@code listener}, and when the request ends its usage is charged to the caller's key (counters, token bucket). */
    private GenerationListener charged(String key, GenerationListener listener) {
        return new GenerationListener() {
            @Override
            public void onPromptLogprobs(int choice, List<TokenLogprobs> logprobs) {
                listener.onPromptLogprobs(choice, logprobs);
            }

            @Override
            public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
                listener.onToken(choice, tokenId, text, logprobs);
            }

            @Override
            public void onText(int choice, String text) {
                listener.onText(choice, text);
            }

            @Override
            public void onChoiceFinished(int choice, FinishReason reason, Usage usage, String message) {
                listener.onChoiceFinished(choice, reason, usage, message);
            }

            @Override
            public void onFinished(Usage usage) {
                gate.used(key, usage);
                listener.onFinished(usage);
            }
        };
    }

    private static int[] tokenize(ServedModel served, PromptInput prompt, String param, int context) {
        InferenceEngine engine = served.engine();
        Tokenizer tokenizer = engine.tokenizer();
        try {
            int[] tokens = switch (prompt) {
                case PromptInput.Chat chat -> ChatTemplates.encodePrompt(tokenizer,
                        fitting(engine.chatTemplate().render(new ChatRequest(chat.messages(), true, chat.tools())), served, param, context));
                case PromptInput.Text text -> tokenizer.encode(fitting(text.text(), served, param, context));
                case PromptInput.Tokens ids -> ids.ids(); // checked against the vocabulary by the scheduler
            };
            if (tokens.length == 0) {
                throw new InvalidRequestException(param, "The prompt is empty");
            }
            return tokens;
        } catch (ChatTemplateException e) {
            throw new InvalidRequestException(param, "The chat template cannot render these messages: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException(param, e.getMessage());
        }
    }

    /** Refuses, without tokenizing it, a text too long for the context whatever its tokens. */
    private static String fitting(String text, ServedModel served, String param, int context) {
        if (text.length() > (long) context * served.maxPieceBytes()) {
            throw new InvalidRequestException(param, "This model's maximum context length is " + context
                    + " tokens. However, your prompt has " + text.length() + " characters, which is more than that.");
        }
        return text;
    }

    private static int[] checkIds(int[] ids, int vocab) {
        for (int id : ids) {
            if (id < 0 || id >= vocab) {
                throw new IllegalArgumentException("token id " + id + " is outside the vocabulary [0, " + vocab + ")");
            }
        }
        return ids;
    }

    private static List<String> stopStrings(InferenceEngine engine, PromptInput prompt, GenerationOptions options) {
        Set<String> stops = new LinkedHashSet<>(options.stopStrings());
        // a grammar decides where the text ends (end of generation only where it accepts): the template's end-of-turn
        // strings could otherwise cut a sentence of it, say a JSON string that happens to contain one
        if (prompt instanceof PromptInput.Chat && options.grammar() == null) {
            for (String s : engine.chatTemplate().stopStrings()) {
                if (!s.isEmpty()) {
                    stops.add(s);
                }
            }
        }
        return new ArrayList<>(stops);
    }

    /** Token ids of {@code text} ({@code /v1/tokenize}). */
    public int[] tokenize(String model, String text, boolean addSpecial, boolean parseSpecial) {
        Tokenizer tokenizer = modelOrDefault(model).engine().tokenizer();
        try {
            return tokenizer.encode(text, addSpecial, parseSpecial);
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException("text", e.getMessage());
        }
    }

    /** Text of token ids ({@code /v1/detokenize}). */
    public String detokenize(String model, int[] tokens) {
        Tokenizer tokenizer = modelOrDefault(model).engine().tokenizer();
        try {
            return tokenizer.decode(checkIds(tokens, tokenizer.size()));
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException("tokens", e.getMessage());
        }
    }

    private ServedModel modelOrDefault(String model) {
        return model == null ? engines.require() : model(model);
    }
}
