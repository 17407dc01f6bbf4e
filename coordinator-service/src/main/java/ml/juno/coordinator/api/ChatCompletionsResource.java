package ml.juno.coordinator.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.common.annotation.RunOnVirtualThread;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import ml.juno.coordinator.api.dto.ChatCompletion;
import ml.juno.coordinator.api.dto.ChatCompletionChunk;
import ml.juno.coordinator.api.dto.ChatCompletionRequest;
import ml.juno.coordinator.api.dto.ChunkFormat;
import ml.juno.coordinator.api.dto.ErrorResponse;
import ml.juno.coordinator.api.dto.Replies;
import ml.juno.coordinator.api.dto.RequestDefaults;
import ml.juno.coordinator.api.dto.RequestMapping;
import ml.juno.coordinator.api.dto.ResponseIds;
import ml.juno.coordinator.api.dto.ToolMapping;
import ml.juno.coordinator.service.PromptInput;
import ml.juno.coordinator.service.GenerationOptions;
import ml.juno.coordinator.service.GenerationService;
import ml.juno.coordinator.service.JunoConfig;
import ml.juno.coordinator.service.RequestKind;
import ml.juno.coordinator.service.ServedModel;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.jboss.resteasy.reactive.RestMulti;

/** {@code POST /v1/chat/completions}, blocking or streamed ({@code "stream": true}). */
@Path("/v1/chat/completions")
public class ChatCompletionsResource {

    private final GenerationService service;
    private final ObjectMapper json;
    private final RequestDefaults defaults;

    ChatCompletionsResource(GenerationService service, ObjectMapper json, JunoConfig config) {
        this.service = service;
        this.json = json;
        this.defaults = config.defaults().toRecord();
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    // no @Produces: any Accept is fine; each response sets its own Content-Type (JSON or SSE)
    @Blocking
    @RunOnVirtualThread
    @Operation(summary = "Creates a chat completion (JSON, or server-sent events of chat.completion.chunk with stream)")
    @APIResponse(responseCode = "200", description = "The completion; with stream, text/event-stream of chunks ending with data: [DONE]",
            content = {@Content(mediaType = "application/json", schema = @Schema(implementation = ChatCompletion.class)),
                    @Content(mediaType = "text/event-stream", schema = @Schema(implementation = ChatCompletionChunk.class))})
    @APIResponse(responseCode = "400", description = "Invalid, unknown or unsupported parameter (error.param names it)",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = ErrorResponse.class)))
    @APIResponse(responseCode = "404", description = "Unknown model", content = @Content(mediaType = "application/json",
            schema = @Schema(implementation = ErrorResponse.class)))
    @APIResponse(responseCode = "429", description = "Queue full (Retry-After)", content = @Content(mediaType = "application/json",
            schema = @Schema(implementation = ErrorResponse.class)))
    public RestMulti<String> create(@Valid @NotNull ChatCompletionRequest request) {
        ServedModel model = service.model(request.model());
        ToolMapping.Plan tools = ToolMapping.plan(request, model.engine().chatTemplate());
        GenerationOptions options = tools.constrain(RequestMapping.chatOptions(request, defaults));
        PromptInput.Chat prompt = tools.prompt(ToolMapping.messages(request));
        String id = ResponseIds.chat();
        long created = System.currentTimeMillis() / 1000;
        if (request.streaming()) {
            ChunkFormat format = new ChunkFormat(json, model.engine().tokenizer(), true, id, created, model.id(), model.fingerprint(),
                    request.wantsUsageChunk());
            return Responder.stream(service, model, prompt, options, RequestKind.CHAT, format,
                    request.wantsUsageChunk(), tools);
        }
        Replies replies = new Replies(json);
        return Responder.whole(service, model, prompt, options, RequestKind.CHAT,
                r -> replies.chat(id, created, model, r, options.logprobs() >= 0, tools));
    }
}
