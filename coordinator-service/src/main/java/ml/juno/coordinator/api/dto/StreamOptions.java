package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;

/** {@code stream_options}: {@code include_usage} adds a last chunk with the usage and empty {@code choices}. */
public record StreamOptions(@JsonProperty("include_usage") Boolean includeUsage) {
    public boolean wantsUsage() {
        return Boolean.TRUE.equals(includeUsage);
    }
}
