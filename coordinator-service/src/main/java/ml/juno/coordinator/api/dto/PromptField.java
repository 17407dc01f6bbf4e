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
 * The completions {@code prompt}, in OpenAI's four shapes: a string, an array of token ids, an array of strings, or an
 * array of token-id arrays. The result is the list of prompts (one for the first two shapes), at most
 * {@link Limits#MAX_PROMPTS}.
 */
public final class PromptField extends JsonDeserializer<List<PromptInput>> {

    @Override
    public List<PromptInput> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonNode node = ctxt.readTree(p);
        if (node.isTextual()) {
            return List.of(new PromptInput.Text(node.asText()));
        }
        if (!node.isArray() || node.isEmpty()) {
            return mismatch(ctxt, "must be a string, an array of token ids, or a non-empty array of strings or of token-id arrays");
        }
        if (node.get(0).isNumber()) {
            return List.of(tokens(node, ctxt, ""));
        }
        if (node.size() > Limits.MAX_PROMPTS) {
            return mismatch(ctxt, "at most " + Limits.MAX_PROMPTS + " prompts per request, got " + node.size());
        }
        List<PromptInput> prompts = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode one = node.get(i);
            if (one.isTextual()) {
                prompts.add(new PromptInput.Text(one.asText()));
            } else if (one.isArray() && !one.isEmpty() && one.get(0).isNumber()) {
                prompts.add(tokens(one, ctxt, "prompt " + i + ": "));
            } else {
                return mismatch(ctxt, "prompt " + i + " must be a string or a non-empty array of token ids");
            }
        }
        return List.copyOf(prompts);
    }

    private static PromptInput tokens(JsonNode node, DeserializationContext ctxt, String where) throws IOException {
        int[] ids = new int[node.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode id = node.get(i);
            if (!id.isIntegralNumber() || !id.canConvertToInt()) {
                return mismatch(ctxt, where + "token array element " + i + " is not a token id");
            }
            ids[i] = id.intValue();
        }
        return new PromptInput.Tokens(ids);
    }

    private static <T> T mismatch(DeserializationContext ctxt, String message) throws IOException {
        return ctxt.reportInputMismatch(PromptInput.class, message);
    }
}
