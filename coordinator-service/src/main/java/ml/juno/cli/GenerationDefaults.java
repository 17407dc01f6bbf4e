package ml.juno.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --max-tokens}, {@code --temperature}, {@code --top-k}, {@code --top-p} on the server commands: the values a
 * request gets when it does not set them (the old command line's generation flags). Unset flags keep OpenAI's
 * defaults. Shared by {@code local}, {@code cluster}, {@code coordinator} and the top-level command as a picocli mixin.
 */
final class GenerationDefaults {

    @Option(names = "--max-tokens", paramLabel = "N",
            description = "Tokens generated at most when a request sets no max_tokens (default: until the context is full for chat, 16 for completions).")
    Integer maxTokens;

    @Option(names = "--temperature", paramLabel = "T", description = "Temperature when a request sets none (0..2; default: 1).")
    Double temperature;

    @Option(names = "--top-k", paramLabel = "K", description = "Top-k when a request sets none (0 = off, the default).")
    Integer topK;

    @Option(names = "--top-p", paramLabel = "P", description = "Top-p when a request sets none (0..1; default: 1).")
    Double topP;

    /** The coordinator's {@code juno.defaults.*} properties for the flags given; bad values are a clear error. */
    Map<String, String> properties() {
        Map<String, String> p = new LinkedHashMap<>();
        if (maxTokens != null) {
            if (maxTokens < 1) {
                throw new CliException("--max-tokens must be >= 1, got " + maxTokens);
            }
            p.put("juno.defaults.max-tokens", maxTokens.toString());
        }
        if (temperature != null) {
            if (!(temperature >= 0 && temperature <= 2)) {
                throw new CliException("--temperature must be in 0..2, got " + temperature);
            }
            p.put("juno.defaults.temperature", temperature.toString());
        }
        if (topK != null) {
            if (topK < 0) {
                throw new CliException("--top-k must be >= 0, got " + topK);
            }
            p.put("juno.defaults.top-k", topK.toString());
        }
        if (topP != null) {
            if (!(topP >= 0 && topP <= 1)) {
                throw new CliException("--top-p must be in 0..1, got " + topP);
            }
            p.put("juno.defaults.top-p", topP.toString());
        }
        return p;
    }
}
