package ml.juno.coordinator.api;

import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import ml.juno.coordinator.api.dto.EmbeddingList;
import ml.juno.coordinator.api.dto.EmbeddingsRequest;
import ml.juno.coordinator.api.dto.ErrorResponse;
import ml.juno.coordinator.service.EmbeddingService;
import ml.juno.coordinator.service.GenerationService;
import ml.juno.coordinator.service.ServedModel;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/** {@code POST /v1/embeddings}: the model's final hidden states, pooled and L2-normalised, in OpenAI's shape. */
@Path("/v1/embeddings")
public class EmbeddingsResource {
    private final GenerationService models;
    private final EmbeddingService service;

    EmbeddingsResource(GenerationService models, EmbeddingService service) {
        this.models = models;
        this.service = service;
    }

    /**
     * Checked and queued on a worker thread (tokenizing can take a while); the answer waits on the worker pool, and a
     * client that hangs up before it comes cancels the subscription and with it every input still running.
     */
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Blocking
    @Operation(summary = "Creates embeddings: one pooled, L2-normalised vector per input")
    @APIResponse(responseCode = "200", description = "The vectors in input order (X-Juno-Latency-Ms: the server's time)",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = EmbeddingList.class)))
    @APIResponse(responseCode = "400", description = "Invalid input (error.param names it)",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = ErrorResponse.class)))
    @APIResponse(responseCode = "429", description = "Queue full (Retry-After)", content = @Content(mediaType = "application/json",
            schema = @Schema(implementation = ErrorResponse.class)))
    public Uni<Response> create(@Valid @NotNull EmbeddingsRequest request) {
        long t0 = System.nanoTime();
        ServedModel model = models.model(request.model());
        EmbeddingService.Pending pending = service.start(model, request.input(), request.dimensions());
        return Uni.createFrom().item(() -> service.finish(pending))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .onCancellation().invoke(pending::cancel)
                .map(r -> Response.ok(EmbeddingList.of(r.vectors(), model.id(), r.promptTokens(), request.base64()))
                        .header(Responder.LATENCY_HEADER, Long.toString((System.nanoTime() - t0) / 1_000_000))
                        .build());
    }
}
