package ml.juno.coordinator.api.dto;

import java.util.List;
import java.util.Map;

/**
 * The request fields chat and text completions share: OpenAI's sampling fields plus Juno's extensions
 * ({@code top_k}, {@code min_p}, {@code repetition_penalty}, {@code priority}, the names vLLM and llama.cpp use).
 * Absent fields are {@code null} and take OpenAI's defaults.
 */
public interface SamplingFields {
    String model();

    Double temperature();

    Double topP();

    List<String> stop();

    Long seed();

    Integer n();

    Double presencePenalty();

    Double frequencyPenalty();

    Map<String, Double> logitBias();

    Boolean stream();

    StreamOptions streamOptions();

    String user();

    Integer topK();

    Double minP();

    Double repetitionPenalty();

    Integer priority();

    default boolean streaming() {
        return Boolean.TRUE.equals(stream());
    }

    default boolean wantsUsageChunk() {
        return streaming() && streamOptions() != null && streamOptions().wantsUsage();
    }
}
