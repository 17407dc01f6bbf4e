package ml.juno.coordinator.api;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.function.Function;
import ml.juno.coordinator.api.dto.ChunkFormat;
import ml.juno.coordinator.api.dto.HttpReply;
import ml.juno.coordinator.api.dto.SseStream;
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

    private Responder() {
    }

    static RestMulti<String> stream(GenerationService service, ServedModel model, PromptInput prompt, GenerationOptions options,
                                    RequestKind kind, ChunkFormat format, boolean includeUsage) {
        SseStream sse = new SseStream(format, kind == RequestKind.CHAT, options.n(), includeUsage).open();
        RequestOutput generation = service.start(model, prompt, options, kind, sse);
        return RestMulti.fromMultiData(sse.frames(generation::cancel))
                .header("Content-Type", "text/event-stream; charset=utf-8")
                .header("Cache-Control", "no-cache")
                .header("X-Accel-Buffering", "no")
                .build();
    }

    static RestMulti<String> whole(GenerationService service, ServedModel model, PromptInput prompt, GenerationOptions options,
                                   RequestKind kind, Function<CollectedGeneration.Result, HttpReply> reply) {
        CollectedGeneration collected = new CollectedGeneration(options.n(), options.logprobs() >= 0);
        RequestOutput generation = service.start(model, prompt, options, kind, collected);
        Uni<HttpReply> answer = Uni.createFrom().completionStage(collected.result())
                .emitOn(Infrastructure.getDefaultWorkerPool()) // serialize on a worker, not on the request's output thread
                .map(reply)
                .onCancellation().invoke(generation::cancel);
        return RestMulti.fromUniResponse(answer, r -> Multi.createFrom().item(r.body()), HttpReply::headers, HttpReply::status);
    }
}
