package ml.juno.coordinator.api;

import io.smallrye.common.annotation.Blocking;
import io.smallrye.common.annotation.RunOnVirtualThread;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import ml.juno.coordinator.api.dto.EmbeddingList;
import ml.juno.coordinator.api.dto.EmbeddingsRequest;
import ml.juno.coordinator.engine.EmbeddingOutput;
import ml.juno.coordinator.service.EmbeddingService;
import ml.juno.coordinator.service.GenerationService;
import ml.juno.coordinator.service.ServedModel;

/** {@code POST /v1/embeddings}: the model's final hidden states, pooled and L2-normalised, in OpenAI's shape. */
@Path("/v1/embeddings")
public class EmbeddingsResource {
    private final GenerationService models;
    private final EmbeddingService service;

    EmbeddingsResource(GenerationService models, EmbeddingService service) {
        this.models = models;
        this.service = service;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Blocking
    @RunOnVirtualThread
    public EmbeddingList create(@Valid @NotNull EmbeddingsRequest request) {
        ServedModel model = models.model(request.model());
        EmbeddingOutput.Result r = service.embed(model, request.input(), request.dimensions());
        return EmbeddingList.of(r.vectors(), model.id(), r.promptTokens(), request.base64());
    }
}
