package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import ml.juno.coordinator.service.ServedModel;

/** {@code GET /v1/models/{id}}: OpenAI's model object, plus the context length Juno serves it with. */
@com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
public record ModelCard(String id, String object, long created, @JsonProperty("owned_by") String ownedBy,
                        @JsonProperty("context_length") int contextLength, String parent) {

    /** The model, or a named LoRA adapter with its base as {@code parent} (as vLLM lists them). */
    public static ModelCard of(ServedModel m) {
        return new ModelCard(m.id(), "model", m.created(), "juno", m.engine().info().contextLength(), m.parent());
    }

    /** {@code GET /v1/models}. */
    public record Listing(String object, List<ModelCard> data) {
        public static Listing of(List<ModelCard> cards) {
            return new Listing("list", cards);
        }
    }
}
