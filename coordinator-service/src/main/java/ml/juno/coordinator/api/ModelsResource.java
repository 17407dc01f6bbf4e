package ml.juno.coordinator.api;

import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import ml.juno.coordinator.api.dto.ModelCard;
import ml.juno.coordinator.service.EngineProducer;
import ml.juno.coordinator.service.GenerationService;

/** {@code GET /v1/models} and {@code GET /v1/models/{id}}. */
@Path("/v1/models")
@Produces(MediaType.APPLICATION_JSON)
public class ModelsResource {

    private final EngineProducer engines;
    private final GenerationService service;

    ModelsResource(EngineProducer engines, GenerationService service) {
        this.engines = engines;
        this.service = service;
    }

    /** The served model; an empty list while it is loading. */
    @GET
    public ModelCard.Listing list() {
        return ModelCard.Listing.of(engines.current()
                .map(m -> m.withAdapters().stream().map(ModelCard::of).toList()).orElse(List.of()));
    }

    @GET
    @Path("/{id}")
    public ModelCard get(@PathParam("id") String id) {
        return ModelCard.of(service.model(id));
    }

    /** Unloads the served model (the old native API's unload): requests in flight end with an error, new ones get 503. */
    @DELETE
    @Path("/{id}")
    public java.util.Map<String, Object> delete(@PathParam("id") String id) {
        if (!engines.unload(id)) {
            service.model(id); // 404 for another id, 503 when nothing is loaded
            throw new ml.juno.coordinator.service.UnknownModelException(id);
        }
        return java.util.Map.of("id", id, "object", "model", "deleted", true);
    }
}
