package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import ml.juno.coordinator.service.PromptInput;

/**
 * The completions {@code prompt}: a string, an array of token ids, or an array holding exactly one of those
 * (what SDKs send for a single prompt). Several prompts in one request are refused.
 */
public final class PromptField extends JsonDeserializer<PromptInput> {

    @Override
    public PromptInput deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        return parse(ctxt.readTree(p), ctxt, true);
    }

    private static PromptInput parse(JsonNode node, DeserializationContext ctxt, boolean outer) throws IOException {
        if (node.isTextual()) {
            return new PromptInput.Text(node.asText());
        }
        if (node.isArray() && !node.isEmpty() && node.get(0).isIntegralNumber()) {
            int[] ids = new int[node.size()];
            for (int i = 0; i < ids.length; i++) {
                JsonNode id = node.get(i);
                if (!id.isIntegralNumber() || !id.canConvertToInt()) {
                    return ctxt.reportInputMismatch(PromptInput.class, "token array element " + i + " is not a token id");
                }
                ids[i] = id.intValue();
            }
            return new PromptInput.Tokens(ids);
        }
        if (outer && node.isArray() && node.size() == 1) {
            return parse(node.get(0), ctxt, false);
        }
        if (outer && node.isArray() && node.size() > 1) {
            return ctxt.reportInputMismatch(PromptInput.class, "only one prompt per request is supported; send several requests");
        }
        return ctxt.reportInputMismatch(PromptInput.class, "must be a string, an array of token ids, or an array of one of those");
    }
}
