package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/** OpenAI's embeddings reply: {@code object: list}, one {@code embedding} per input in input order, {@code usage}. */
public record EmbeddingList(String object, List<Item> data, String model, Usage usage) {

    /** One input's vector: a float array, or base64 of its little-endian float32 bytes. */
    public record Item(String object, int index, Object embedding) {
    }

    /** Embeddings count prompt tokens only. */
    public record Usage(@JsonProperty("prompt_tokens") int promptTokens, @JsonProperty("total_tokens") int totalTokens) {
    }

    public static EmbeddingList of(List<float[]> vectors, String model, int promptTokens, boolean base64) {
        List<Item> items = new ArrayList<>(vectors.size());
        for (int i = 0; i < vectors.size(); i++) {
            float[] v = vectors.get(i);
            items.add(new Item("embedding", i, base64 ? base64(v) : v));
        }
        return new EmbeddingList("list", items, model, new Usage(promptTokens, promptTokens));
    }

    /** Base64 of {@code v} as little-endian float32, what OpenAI's {@code encoding_format: base64} sends. */
    public static String base64(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return Base64.getEncoder().encodeToString(b.array());
    }
}
