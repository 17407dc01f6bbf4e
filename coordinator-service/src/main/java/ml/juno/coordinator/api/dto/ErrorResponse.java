package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;

/** OpenAI's error envelope: {@code {"error":{"message","type","param","code"}}}. */
public record ErrorResponse(Body error) {

    /** {@code param} and {@code code} are written as {@code null} when unknown, as OpenAI does. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Body(String message, String type, String param, String code) {
    }

    public static ErrorResponse of(String message, String type, String param, String code) {
        return new ErrorResponse(new Body(message, type, param, code));
    }
}
