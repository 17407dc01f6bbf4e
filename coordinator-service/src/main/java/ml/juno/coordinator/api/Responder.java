package ml.juno.coordinator.api;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.List;
import java.util.function.Function;
import ml.juno.coordinator.api.dto.ChunkFormat;
import ml.juno.coordinator.api.dto.HttpReply;
import ml.juno.coordinator.api.dto.SseStream;
import ml.juno.coordinator.api.dto.ToolMapping;
import ml.juno.coordinator.engine.RequestOutput;
import ml.juno.coordinator.service.CollectedGeneration;
import ml.juno.coordinator.service.GenerationOptions;
import ml.juno.coordinator.service.GenerationService;
import ml.juno.coordinator.service.PromptInput;
import ml.juno.coordinator.service.RequestKind;
import ml.juno.coordinator.service.ServedModel;
import org.jboss.resteasy.reactive.RestMulti;

/**
 * Answers a generation request either as an SSE stream or as one JSON body. Both are a {@link RestMulti}, so
 * one endpoint can do both; a client that hangs up cancels its subscription and with it every choice.
 */
final class Responder {

    /** Milliseconds the server spent on the request (whole replies: all of it; streams: until the stream opened). */
    static final String LATENCY_HEADER = "X-Juno-Latency-Ms";

    private Responder() {
    }

    static RestMulti<String> stream(GenerationService service, ServedModel model, PromptInput prompt, GenerationOptions options,
                                    RequestKind kind, ChunkFormat format, boolean includeUsage) {
        return stream(service, model, List.of(prompt), options, kind, format, includeUsage, null, null);
    }

    /** As above, chat choices read for tool calls by {@code tools} (null: none). */
    static RestMulti<String> stream(GenerationService service, ServedModel model, PromptInput prompt, GenerationOptions options,
                                    RequestKind kind, ChunkFormat format, boolean includeUsage, ToolMapping.Plan tools) {
        return stream(service, model, List.of(prompt), options, kind, format, includeUsage, null, tools);
    }

    /**
     * As above for several prompts ({@code options.n()} choices each); {@code echo}: the text each prompt's choices start
     * with (completions' {@code echo}), or null; {@code tools}: chat choices read for tool calls, or null.
     */
    static RestMulti<String> stream(GenerationService service, ServedModel model, List<PromptInput> prompts,
                                    GenerationOptions options, RequestKind kind, ChunkFormat format, boolean includeUsage,
                                    List<String> echo, ToolMapping.Plan tools) {
        long t0 = System.nanoTime();
        SseStream sse = new SseStream(format, kind == RequestKind.CHAT, prompts.size() * options.n(), includeUsage)
                .echo(echo, options.n(), options.promptLogprobs()).withTools(tools).open();
        RequestOutput generation = service.start(model, prompts, options, kind, sse);
        return RestMulti.fromMultiData(sse.frames(generation::cancel))
                .header("Content-Type", "text/event-stream; charset=utf-8")
                .header("Cache-Control", "no-cache")
                .header("X-Accel-Buffering", "no")
                .header(LATENCY_HEADER, Long.toString((System.nanoTime() - t0) / 1_000_000)) // until admitted: the stream's own timing is in its events
                .build();
    }

    static RestMulti<String> whole(GenerationService service, ServedModel model, PromptInput prompt, GenerationOptions options,
                                   RequestKind kind, Function<CollectedGeneration.Result, HttpReply> reply) {
        return whole(service, model, List.of(prompt), options, kind, reply);
    }

    /** As above for several prompts, {@code options.n()} choices each. */
    static RestMulti<String> whole(GenerationService service, ServedModel model, List<PromptInput> prompts,
                                   GenerationOptions options, RequestKind kind,
                                   Function<CollectedGeneration.Result, HttpReply> reply) {
        long t0 = System.nanoTime();
        CollectedGeneration collected = new CollectedGeneration(prompts.size() * options.n(), options.logprobs() >= 0);
        RequestOutput generation = service.start(model, prompts, options, kind, collected);
        Uni<HttpReply> answer = Uni.createFrom().completionStage(collected.result())
                .emitOn(Infrastructure.getDefaultWorkerPool()) // serialize on a worker, not on the request's output thread
                .map(reply)
                .onCancellation().invoke(generation::cancel);
        return RestMulti.fromUniResponse(answer, r -> Multi.createFrom().item(r.body()),
                r -> r.headersWith(LATENCY_HEADER, Long.toString((System.nanoTime() - t0) / 1_000_000)), HttpReply::status);
    }
}
