package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** OpenAI's error envelope: {@code {"error":{"message","type","param","code"}}}. */
@Schema(description = "OpenAI's error envelope, for every 4xx and 5xx of the OpenAI routes (unknown routes and methods included).")
public record ErrorResponse(@Schema(description = "The error.") Body error) {

    /** {@code param} and {@code code} are written as {@code null} when unknown, as OpenAI does. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Body(@Schema(description = "What went wrong, for people.") String message,
                       @Schema(description = "invalid_request_error, not_found_error, rate_limit_error, service_unavailable_error or server_error.") String type,
                       @Schema(description = "The request field at fault (e.g. messages[0].content, suffix), or null.") String param,
                       @Schema(description = "A machine-readable code (invalid_value, unsupported_parameter, unknown_parameter, model_not_found, queue_full, unknown_url …) or null.") String code) {
    }

    public static ErrorResponse of(String message, String type, String param, String code) {
        return new ErrorResponse(new Body(message, type, param, code));
    }
}
