package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** OpenAI's {@code stop}: a string or an array of strings (a {@code null} means none). */
public final class StopField extends JsonDeserializer<List<String>> {

    @Override
    public List<String> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_STRING) {
            return List.of(p.getText());
        }
        if (p.currentToken() != JsonToken.START_ARRAY) {
            return ctxt.reportInputMismatch(List.class, "must be a string or an array of strings");
        }
        List<String> stops = new ArrayList<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            if (t != JsonToken.VALUE_STRING) {
                return ctxt.reportInputMismatch(List.class, "must be a string or an array of strings");
            }
            stops.add(p.getText());
        }
        return stops;
    }
}
