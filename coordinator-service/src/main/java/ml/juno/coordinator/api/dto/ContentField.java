package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

/**
 * A message's {@code content}: a string, or an array of content parts of which Juno understands
 * {@code {"type":"text","text":…}} (joined with newlines, as vLLM does). Other part types are refused.
 */
public final class ContentField extends JsonDeserializer<String> {

    @Override
    public String deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        if (p.currentToken() != JsonToken.START_ARRAY) {
            return ctxt.reportInputMismatch(String.class, "must be a string or an array of content parts");
        }
        JsonNode parts = ctxt.readTree(p);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            JsonNode part = parts.get(i);
            if (!part.isObject() || !"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
                String type = part.path("type").isTextual() ? part.path("type").asText() : "?";
                return ctxt.reportInputMismatch(String.class,
                        "content part " + i + " has type '" + type + "'; only {\"type\":\"text\",\"text\":string} parts are supported");
            }
            if (i > 0) {
                sb.append('\n');
            }
            sb.append(part.get("text").asText());
        }
        return sb.toString();
    }
}
