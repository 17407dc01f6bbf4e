package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** {@code stream_options}: {@code include_usage} adds a last chunk with the usage and empty {@code choices}. */
@Schema(description = "End the stream with a chunk holding the usage and empty choices; every other chunk has \"usage\": null.")
public record StreamOptions(@JsonProperty("include_usage") Boolean includeUsage) {
    public boolean wantsUsage() {
        return Boolean.TRUE.equals(includeUsage);
    }
}
