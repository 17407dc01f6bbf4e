package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import ml.juno.coordinator.tools.ToolChoice;

/** {@code tool_choice}: {@code "auto"}, {@code "none"}, {@code "required"} or {@code {"type":"function","function":{"name":…}}}. */
public final class ToolChoiceField extends JsonDeserializer<ToolChoice> {

    @Override
    public ToolChoice deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_STRING) {
            return switch (p.getText()) {
                case "auto" -> ToolChoice.AUTO;
                case "none" -> ToolChoice.NONE;
                case "required" -> ToolChoice.REQUIRED;
                default -> ctxt.reportInputMismatch(ToolChoice.class,
                        "must be 'auto', 'none', 'required' or {\"type\":\"function\",\"function\":{\"name\":…}}, got '" + p.getText() + "'");
            };
        }
        JsonNode node = ctxt.readTree(p);
        JsonNode name = node.path("function").path("name");
        if (!node.isObject() || !"function".equals(node.path("type").asText()) || !name.isTextual() || name.asText().isEmpty()) {
            return ctxt.reportInputMismatch(ToolChoice.class,
                    "must be 'auto', 'none', 'required' or {\"type\":\"function\",\"function\":{\"name\":…}}");
        }
        return new ToolChoice.Named(name.asText());
    }
}
