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
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.api.dto.ChunkFormat;
import ml.juno.coordinator.api.dto.CompletionRequest;
import ml.juno.coordinator.api.dto.ErrorResponse;
import ml.juno.coordinator.api.dto.Replies;
import ml.juno.coordinator.api.dto.RequestDefaults;
import ml.juno.coordinator.api.dto.RequestMapping;
import ml.juno.coordinator.api.dto.ResponseIds;
import ml.juno.coordinator.api.dto.TextCompletion;
import ml.juno.coordinator.service.GenerationOptions;
import ml.juno.coordinator.service.GenerationService;
import ml.juno.coordinator.service.InvalidRequestException;
import ml.juno.coordinator.service.JunoConfig;
import ml.juno.coordinator.service.PromptInput;
import ml.juno.coordinator.service.RequestKind;
import ml.juno.coordinator.service.ServedModel;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.jboss.resteasy.reactive.RestMulti;

/** {@code POST /v1/completions} (legacy text completions), blocking or streamed. */
@Path("/v1/completions")
public class CompletionsResource {

    private final GenerationService service;
    private final ObjectMapper json;
    private final RequestDefaults defaults;

    CompletionsResource(GenerationService service, ObjectMapper json, JunoConfig config) {
        this.service = service;
        this.json = json;
        this.defaults = config.defaults().toRecord();
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    // no @Produces: any Accept is fine; each response sets its own Content-Type (JSON or SSE)
    @Blocking
    @RunOnVirtualThread
    @Operation(summary = "Creates a text completion (JSON, or server-sent events of text_completion chunks with stream)")
    @APIResponse(responseCode = "200", description = "The completion; with stream, text/event-stream of chunks ending with data: [DONE]",
            content = {@Content(mediaType = "application/json", schema = @Schema(implementation = TextCompletion.class)),
                    @Content(mediaType = "text/event-stream", schema = @Schema(implementation = TextCompletion.class))})
    @APIResponse(responseCode = "400", description = "Invalid, unknown or unsupported parameter (error.param names it)",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = ErrorResponse.class)))
    @APIResponse(responseCode = "404", description = "Unknown model", content = @Content(mediaType = "application/json",
            schema = @Schema(implementation = ErrorResponse.class)))
    @APIResponse(responseCode = "429", description = "Queue full (Retry-After)", content = @Content(mediaType = "application/json",
            schema = @Schema(implementation = ErrorResponse.class)))
    public RestMulti<String> create(@Valid @NotNull CompletionRequest request) {
        ServedModel model = service.model(request.model());
        GenerationOptions options = RequestMapping.completionOptions(request, defaults);
        List<PromptInput> prompts = request.prompt();
        List<String> echo = request.echoes() ? echoTexts(prompts, model) : null;
        String id = ResponseIds.completion();
        long created = System.currentTimeMillis() / 1000;
        if (request.streaming()) {
            ChunkFormat format = new ChunkFormat(json, model.engine().tokenizer(), false, id, created, model.id(), model.fingerprint(),
                    request.wantsUsageChunk());
            return Responder.stream(service, model, prompts, options, RequestKind.COMPLETION, format, request.wantsUsageChunk(), echo, null);
        }
        int n = options.n();
        int generated = request.generatedPerPrompt();
        // best_of: generate more, return the n best by mean log-probability (which the ranking needs even if not asked for)
        GenerationOptions run = generated > n ? options.with(generated, Math.max(0, options.logprobs())) : options;
        Replies replies = new Replies(json);
        boolean logprobs = options.logprobs() >= 0;
        return Responder.whole(service, model, prompts, run, RequestKind.COMPLETION,
                r -> replies.completion(id, created, model, r, logprobs, echo, generated, n));
    }

    /** What {@code echo} puts in front of each prompt's choices: the prompt's text (token ids decoded). */
    private static List<String> echoTexts(List<PromptInput> prompts, ServedModel model) {
        List<String> texts = new ArrayList<>(prompts.size());
        for (PromptInput p : prompts) {
            texts.add(switch (p) {
                case PromptInput.Text t -> t.text();
                case PromptInput.Tokens t -> decode(model, t.ids());
                case PromptInput.Chat c -> throw new IllegalArgumentException("a chat is no completions prompt");
            });
        }
        return texts;
    }

    private static String decode(ServedModel model, int[] ids) {
        try {
            return model.engine().tokenizer().decode(ids);
        } catch (IllegalArgumentException e) { // an id outside the vocabulary
            throw new InvalidRequestException("prompt", e.getMessage());
        }
    }
}
