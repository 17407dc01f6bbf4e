package ml.juno.coordinator.api.dto;

import java.util.List;
import java.util.Map;

/** A whole (non-streamed) reply: status, JSON body, content type. */
public record HttpReply(int status, String body) {

    public Map<String, List<String>> headers() {
        return Map.of("Content-Type", List.of("application/json"));
    }

    /** {@link #headers()} and one more. */
    public Map<String, List<String>> headersWith(String name, String value) {
        return Map.of("Content-Type", List.of("application/json"), name, List.of(value));
    }
}
