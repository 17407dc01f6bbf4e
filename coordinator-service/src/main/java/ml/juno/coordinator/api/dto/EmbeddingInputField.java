package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.service.PromptInput;

/**
 * The embeddings {@code input}: a string, an array of strings, an array of token ids (one input), or an array of
 * token-id arrays (several). An empty array is left for the service to refuse ("input must not be empty"); an empty
 * string is passed on so that the refusal can name its index.
 */
public final class EmbeddingInputField extends JsonDeserializer<List<PromptInput>> {

    @Override
    public List<PromptInput> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonNode node = ctxt.readTree(p);
        if (node.isTextual()) {
            return List.of(new PromptInput.Text(node.asText()));
        }
        if (!node.isArray()) {
            return mismatch(ctxt, "must be a string, an array of strings, an array of token ids or an array of token-id arrays");
        }
        if (!node.isEmpty() && node.get(0).isIntegralNumber()) {
            return List.of(new PromptInput.Tokens(ids(node, ctxt, "input")));
        }
        List<PromptInput> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode e = node.get(i);
            if (e.isTextual()) {
                out.add(new PromptInput.Text(e.asText()));
            } else if (e.isArray() && !e.isEmpty()) {
                out.add(new PromptInput.Tokens(ids(e, ctxt, "input[" + i + "]")));
            } else if (e.isArray()) {
                return mismatch(ctxt, "input[" + i + "] is an empty token array");
            } else {
                return mismatch(ctxt, "input[" + i + "] must be a string or an array of token ids");
            }
        }
        return out;
    }

    private static int[] ids(JsonNode array, DeserializationContext ctxt, String where) throws IOException {
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode id = array.get(i);
            if (!id.isIntegralNumber() || !id.canConvertToInt()) {
                mismatch(ctxt, where + " element " + i + " is not a token id");
            }
            ids[i] = id.intValue();
        }
        return ids;
    }

    private static List<PromptInput> mismatch(DeserializationContext ctxt, String message) throws IOException {
        return ctxt.reportInputMismatch(List.class, message);
    }
}
