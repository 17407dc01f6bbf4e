package ml.juno.coordinator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.common.annotation.RunOnVirtualThread;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.operators.multi.processors.UnicastProcessor;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import ml.juno.coordinator.api.dto.ChatCompletionRequest;
import ml.juno.coordinator.api.dto.ChatMessageIn;
import ml.juno.coordinator.api.dto.RequestDefaults;
import ml.juno.coordinator.api.dto.RequestMapping;
import ml.juno.coordinator.engine.EngineStats;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.engine.RequestOutput;
import ml.juno.coordinator.engine.Topology;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.service.CollectedGeneration;
import ml.juno.coordinator.service.EngineBusyException;
import ml.juno.coordinator.service.EngineNotReadyException;
import ml.juno.coordinator.service.EngineProducer;
import ml.juno.coordinator.service.GenerationOptions;
import ml.juno.coordinator.service.GenerationService;
import ml.juno.coordinator.service.InvalidRequestException;
import ml.juno.coordinator.service.JunoConfig;
import ml.juno.coordinator.service.RequestKind;
import ml.juno.coordinator.service.ServedModel;
import ml.juno.coordinator.service.ServiceException;
import ml.juno.coordinator.service.UnknownModelException;
import org.jboss.resteasy.reactive.RestMulti;

/**
 * The old product's native API, next to the OpenAI one and on the same engine: {@code POST /v1/inference} (messages and
 * {@code sampling{temperature, topK, topP, maxTokens, priority}} → text, token counts, finish reason, latency),
 * {@code POST /v1/inference/stream} (SSE events {@code {"token", "tokenId", "isComplete"}}) and
 * {@code GET /v1/cluster/health}. Its errors keep the old shape: {@code {"code", "error", "message", "retryAfterMs"}}.
 */
@Path("/v1")
public class NativeApiResource {

    /** A whole request may take this long before the client gets a 504 (the generation is cancelled). */
    private static final long WHOLE_TIMEOUT_S = 600;

    /** {@code sampling} of a native request; every field optional. */
    public record Sampling(Double temperature, Integer topK, Double topP, Integer maxTokens, Integer priority, Long seed) {
    }

    /** A native request: {@code messages} (or a plain {@code prompt}), optional {@code model} and {@code sampling}. */
    public record InferenceRequest(String model, List<ChatMessageIn> messages, String prompt, Sampling sampling, List<String> stop) {
    }

    /** A whole native answer. */
    public record InferenceResponse(String model, String text, int promptTokens, int completionTokens, String finishReason, long latencyMs) {
    }

    /** The old error shape. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record NativeError(int code, String error, String message, Long retryAfterMs) {
    }

    private final GenerationService service;
    private final EngineProducer engines;
    private final Validator validator;
    private final RequestDefaults defaults;
    private final ObjectMapper json;

    NativeApiResource(GenerationService service, EngineProducer engines, Validator validator, JunoConfig config, ObjectMapper json) {
        this.service = service;
        this.engines = engines;
        this.validator = validator;
        this.defaults = config.defaults().toRecord();
        this.json = json.copy().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false); // old clients send fields of their own
    }

    @POST
    @Path("/inference")
    @Consumes(MediaType.WILDCARD)
    @Produces(MediaType.APPLICATION_JSON)
    @Blocking
    @RunOnVirtualThread
    public Response inference(String body) {
        long t0 = System.nanoTime();
        try {
            Parsed p = parse(body);
            CollectedGeneration collected = new CollectedGeneration(1, false);
            RequestOutput generation = service.start(p.model, RequestMapping.chatPrompt(p.chat), p.options, RequestKind.CHAT, collected);
            CollectedGeneration.Result done;
            try {
                done = collected.result().get(WHOLE_TIMEOUT_S, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                generation.cancel();
                return error(504, "timeout", "The request took longer than " + WHOLE_TIMEOUT_S + " s", null);
            } catch (InterruptedException e) {
                generation.cancel();
                Thread.currentThread().interrupt();
                return error(503, "interrupted", "The server is shutting down", null);
            } catch (ExecutionException e) {
                return error(500, "internal", String.valueOf(e.getCause()), null);
            }
            CollectedGeneration.Choice choice = done.choices().get(0);
            if (choice.reason() == FinishReason.ERROR) {
                return RequestOutput.timedOut(choice.message()) ? error(504, "timeout", choice.message(), null)
                        : error(500, "generation_failed", choice.message(), null);
            }
            long latency = (System.nanoTime() - t0) / 1_000_000;
            return Response.ok(new InferenceResponse(p.model.id(), choice.text(), done.usage().promptTokens(),
                    done.usage().completionTokens(), finish(choice.reason()), latency)).header(Responder.LATENCY_HEADER, latency).build();
        } catch (ServiceException e) {
            return error(e);
        }
    }

    @POST
    @Path("/inference/stream")
    @Consumes(MediaType.WILDCARD)
    @Blocking
    @RunOnVirtualThread
    public RestMulti<String> stream(String body) {
        long t0 = System.nanoTime();
        Parsed p;
        StreamEvents events = new StreamEvents(t0);
        RequestOutput generation;
        try {
            p = parse(body);
            generation = service.start(p.model, RequestMapping.chatPrompt(p.chat), p.options, RequestKind.CHAT, events);
        } catch (ServiceException e) {
            Response r = error(e);
            NativeError err = (NativeError) r.getEntity();
            return RestMulti.fromUniResponse(io.smallrye.mutiny.Uni.createFrom().item(err), x -> Multi.createFrom().item(write(x)),
                    x -> headers(r), x -> r.getStatus());
        }
        return RestMulti.fromMultiData(events.frames.onCancellation().invoke(generation::cancel))
                .header("Content-Type", "text/event-stream; charset=utf-8")
                .header("Cache-Control", "no-cache")
                .header("X-Accel-Buffering", "no")
                .header(Responder.LATENCY_HEADER, Long.toString((System.nanoTime() - t0) / 1_000_000))
                .build();
    }

    /** The real state of the deployment: nodes and their shards, queue and KV use, wire encoding. */
    @GET
    @Path("/cluster/health")
    @Produces(MediaType.APPLICATION_JSON)
    public Response clusterHealth() {
        Map<String, Object> h = new LinkedHashMap<>();
        boolean up = engines.current().isPresent();
        h.put("status", up ? "UP" : "DOWN");
        h.put("state", engines.state());
        ServedModel m = engines.loaded().orElse(null); // a degraded cluster still shows which node is down
        if (m != null) {
            Topology t = m.engine().topology();
            EngineStats s = m.engine().stats();
            h.put("model", m.id());
            h.put("mode", t.mode());
            h.put("dtype", t.dtype());
            h.put("byteOrder", t.byteOrder());
            h.put("queueDepth", s.queued());
            h.put("runningSequences", s.running());
            h.put("kvBlocksUsed", s.kvBlocksUsed());
            h.put("kvBlocksTotal", s.kvBlocksTotal());
            h.put("steps", s.steps());
            h.put("promptTokens", s.promptTokens());
            h.put("generatedTokens", s.generatedTokens());
            h.put("prefixHitTokens", s.prefixHitTokens());
            h.put("prefixMissTokens", s.prefixMissTokens());
            List<Map<String, Object>> nodes = new ArrayList<>();
            for (Topology.Node n : t.nodes()) {
                Map<String, Object> node = new LinkedHashMap<>();
                node.put("address", n.address());
                node.put("state", n.up() ? "UP" : "DOWN");
                if (!n.up()) {
                    node.put("reason", n.reason());
                }
                node.put("layers", List.of(n.firstLayer(), n.endLayer()));
                node.put("tensorRank", n.tensorRank());
                node.put("worldSize", n.worldSize());
                node.put("bytesSent", n.bytesSent());
                node.put("bytesReceived", n.bytesReceived());
                node.put("calls", n.calls());
                node.put("meanCallMs", n.calls() == 0 ? 0.0 : n.callNanos() / 1e6 / n.calls());
                node.put("meanComputeMs", n.calls() == 0 ? 0.0 : n.computeNanos() / 1e6 / n.calls());
                if (n.worldSize() > 1) { // tensor parallel: what the rank exchanged with its peers, node to node
                    node.put("reductions", n.reductions());
                    node.put("peerBytesSent", n.peerBytesSent());
                    node.put("meanReduceMs", n.reductions() == 0 ? 0.0 : n.reduceNanos() / 1e6 / n.reductions());
                } else if (n.peerBytesSent() > 0 || n.reduceNanos() > 0) { // a pipeline stage: rows it sent on, time it waited for its input
                    node.put("peerBytesSent", n.peerBytesSent());
                    node.put("meanInputWaitMs", n.calls() == 0 ? 0.0 : n.reduceNanos() / 1e6 / n.calls());
                }
                nodes.add(node);
            }
            h.put("nodes", nodes);
        }
        return Response.status(up ? 200 : 503).entity(h).build();
    }

    // ---- parsing and mapping ---------------------------------------------------------------------------------------

    private record Parsed(ServedModel model, ChatCompletionRequest chat, GenerationOptions options) {
    }

    private Parsed parse(String body) {
        InferenceRequest r;
        try {
            r = json.readValue(body == null || body.isBlank() ? "null" : body, InferenceRequest.class);
        } catch (JsonProcessingException e) {
            throw new InvalidRequestException(null, "We could not parse the JSON body of your request: " + e.getOriginalMessage());
        }
        if (r == null) {
            throw new InvalidRequestException(null, "The request body is empty");
        }
        List<ChatMessageIn> messages = r.messages();
        if (messages == null || messages.isEmpty()) {
            if (r.prompt() == null || r.prompt().isEmpty()) {
                throw new InvalidRequestException("messages", "messages (or prompt) is required");
            }
            messages = List.of(new ChatMessageIn("user", r.prompt(), null, null, null));
        }
        Sampling s = r.sampling() != null ? r.sampling() : new Sampling(null, null, null, null, null, null);
        ChatCompletionRequest chat = new ChatCompletionRequest(r.model(), messages, s.maxTokens(), null, s.temperature(), s.topP(),
                r.stop(), s.seed(), 1, null, null, null, null, null, false, null, null, s.topK(), null, null, s.priority(), null, null, null, null, null);
        Set<ConstraintViolation<ChatCompletionRequest>> bad = validator.validate(chat);
        if (!bad.isEmpty()) {
            ConstraintViolation<ChatCompletionRequest> v = bad.stream()
                    .min(java.util.Comparator.comparing(c -> c.getPropertyPath().toString())).orElseThrow();
            String field = v.getPropertyPath().toString();
            throw new InvalidRequestException(field, "Invalid '" + nativeName(field) + "': " + v.getMessage());
        }
        ServedModel model = service.model(r.model());
        return new Parsed(model, chat, RequestMapping.chatOptions(chat, defaults));
    }

    /** The request field a violation names, in the native spelling. */
    private static String nativeName(String field) {
        return switch (field) {
            case "maxTokens", "temperature", "topP", "topK", "priority", "seed" -> "sampling." + field;
            default -> field;
        };
    }

    private static String finish(FinishReason reason) {
        return reason.name().toLowerCase(java.util.Locale.ROOT);
    }

    private Response error(ServiceException e) {
        return switch (e) {
            case InvalidRequestException i -> error(400, "invalid_request", i.getMessage(), null);
            case UnknownModelException u -> error(404, "model_not_found", u.getMessage(), null);
            case EngineBusyException b -> error(429, "busy", b.getMessage(), Math.max(1, b.retryAfter().toMillis()));
            case EngineNotReadyException n -> error(503, "not_ready", n.getMessage(), 1000L);
            case ml.juno.coordinator.service.NotSupportedException n -> error(501, "not_supported", n.getMessage(), null);
        };
    }

    private static Response error(int status, String code, String message, Long retryAfterMs) {
        Response.ResponseBuilder b = Response.status(status).type(MediaType.APPLICATION_JSON_TYPE)
                .entity(new NativeError(status, code, message, retryAfterMs));
        if (retryAfterMs != null) {
            b.header("Retry-After", Math.max(1, (retryAfterMs + 999) / 1000));
        }
        return b.build();
    }

    private static Map<String, List<String>> headers(Response r) {
        Map<String, List<String>> h = new LinkedHashMap<>();
        h.put("Content-Type", List.of("application/json"));
        Object retry = r.getHeaderString("Retry-After");
        if (retry != null) {
            h.put("Retry-After", List.of(retry.toString()));
        }
        return h;
    }

    private String write(Object o) {
        try {
            return json.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- listeners ---------------------------------------------------------------------------------------------------

    /** SSE events of a streamed native request: one per token, then the closing event with the counts. */
    private final class StreamEvents implements GenerationListener {
        final UnicastProcessor<String> frames = UnicastProcessor.create();
        private final long t0;
        private FinishReason reason = FinishReason.ERROR;
        private String message = "";

        StreamEvents(long t0) {
            this.t0 = t0;
        }

        private void event(Map<String, Object> e) {
            frames.onNext("data: " + write(e) + "\n\n");
        }

        @Override
        public void onToken(int choice, int tokenId, String piece, TokenLogprobs logprobs) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("token", piece);
            e.put("tokenId", tokenId);
            e.put("isComplete", false);
            event(e);
        }

        @Override
        public void onText(int choice, String piece) {
            if (!piece.isEmpty()) {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("token", piece);
                e.put("tokenId", -1);
                e.put("isComplete", false);
                event(e);
            }
        }

        @Override
        public void onChoiceFinished(int choice, FinishReason r, Usage usage, String m) {
            reason = r;
            message = m;
        }

        @Override
        public void onFinished(Usage usage) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("token", "");
            e.put("tokenId", -1);
            e.put("isComplete", true);
            e.put("finishReason", finish(reason));
            e.put("promptTokens", usage.promptTokens());
            e.put("completionTokens", usage.completionTokens());
            e.put("latencyMs", (System.nanoTime() - t0) / 1_000_000);
            if (reason == FinishReason.ERROR) {
                e.put("error", RequestOutput.timedOut(message) ? new NativeError(504, "timeout", message, null)
                        : new NativeError(500, "generation_failed", message, null));
            }
            event(e);
            frames.onComplete();
        }
    }
}
