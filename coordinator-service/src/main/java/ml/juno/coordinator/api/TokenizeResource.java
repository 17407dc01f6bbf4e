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
import ml.juno.coordinator.api.dto.DetokenizeRequest;
import ml.juno.coordinator.api.dto.TokenizeRequest;
import ml.juno.coordinator.service.GenerationService;

/** Juno's native {@code POST /v1/tokenize} and {@code POST /v1/detokenize} with the served model's tokenizer. */
@Path("/v1")
@Consumes(MediaType.APPLICATION_JSON)
@Produces(MediaType.APPLICATION_JSON)
public class TokenizeResource {

    private final GenerationService service;

    TokenizeResource(GenerationService service) {
        this.service = service;
    }

    @POST
    @Path("/tokenize")
    @Blocking
    @RunOnVirtualThread
    public TokenizeRequest.Response tokenize(@Valid @NotNull TokenizeRequest request) {
        return new TokenizeRequest.Response(service.tokenize(request.model(), request.text(),
                request.addSpecialOrDefault(), request.parseSpecialOrDefault()));
    }

    @POST
    @Path("/detokenize")
    @Blocking
    @RunOnVirtualThread
    public DetokenizeRequest.Response detokenize(@Valid @NotNull DetokenizeRequest request) {
        return new DetokenizeRequest.Response(service.detokenize(request.model(), request.ids()));
    }
}
