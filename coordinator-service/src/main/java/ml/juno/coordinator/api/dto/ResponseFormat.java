package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;

/**
 * {@code response_format} of a chat completion: {@code {"type": "text"}} (the default), {@code {"type":
 * "json_object"}} (any JSON object) or {@code {"type": "json_schema", "json_schema": {"name": ..., "schema": {...},
 * "strict": true}}}. Both JSON forms are guaranteed: decoding is constrained by the grammar they compile to
 * ({@link GrammarMapping}).
 */
public record ResponseFormat(@NotNull @Size(max = 64) String type,
                             @JsonProperty("json_schema") @Valid JsonSchemaFormat jsonSchema) {

    /**
     * @param name        the schema's name ({@code ^[a-zA-Z0-9_-]{1,64}$}, as OpenAI requires)
     * @param description what the output is for (not used for decoding)
     * @param schema      the JSON schema the output must be valid against
     * @param strict      OpenAI's switch for exact schema adherence; Juno always constrains, so both values decode the
     *                    same way
     */
    public record JsonSchemaFormat(@Size(max = 256) String name, @Size(max = 4096) String description, JsonNode schema,
                                   Boolean strict) {
    }
}
