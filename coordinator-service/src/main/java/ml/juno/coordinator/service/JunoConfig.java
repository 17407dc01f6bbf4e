package ml.juno.coordinator.service;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import ml.juno.engine.kv.KvType;

/**
 * The in-process engine's settings ({@code juno.*}). Unset optional values fall back to
 * {@code EngineConfig.defaults}, which are sized for a small machine.
 */
@ConfigMapping(prefix = "juno")
public interface JunoConfig {

    /** The GGUF file to serve; without it the server stays live but never becomes ready. */
    Optional<Path> modelPath();

    /** CPU threads for the engine; 0 = all cores. */
    @WithDefault("0")
    int threads();

    /** Context length in tokens; 0 = the model's own (capped by the engine). */
    @WithDefault("0")
    int contextLength();

    /** Sequences decoded together at most. */
    OptionalInt maxSequences();

    /** Token budget of one forward step. */
    OptionalInt maxBatchTokens();

    /** Requests waiting at most; beyond it requests get 429. */
    OptionalInt maxQueue();

    /** Element type of the KV cache. */
    Optional<KvType> kvType();

    /** Bytes for the KV cache; unset = sized for max-sequences × context. */
    OptionalLong kvBudgetBytes();

    /** {@code --lora-play}: adapters played on every request, {@code PATH[:SCALE]} each (a cluster's nodes each play their part). */
    Optional<java.util.List<String>> loraPlay();

    /** {@code --lora-modules}: named adapters, {@code name=PATH} each; a request whose {@code model} is a name gets it. */
    Optional<java.util.List<String>> loraModules();

    /** {@code juno.defaults.*}: what a request gets for the sampling fields it leaves out. */
    Defaults defaults();

    /** The server's defaults for requests ({@code --max-tokens}, {@code --temperature}, {@code --top-k}, {@code --top-p}). */
    interface Defaults {
        OptionalInt maxTokens();

        Optional<Double> temperature();

        OptionalInt topK();

        Optional<Double> topP();

        /** As the API layer's record; out-of-range values are refused at start-up. */
        default ml.juno.coordinator.api.dto.RequestDefaults toRecord() {
            return new ml.juno.coordinator.api.dto.RequestDefaults(maxTokens().isPresent() ? maxTokens().getAsInt() : null,
                    temperature().orElse(null), topK().isPresent() ? topK().getAsInt() : null, topP().orElse(null));
        }
    }
}
