package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.NodeScripts;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code /v1/embeddings} of the packaged server (a real process on the bundled stories260K) through the official
 * {@code openai} npm SDK ({@code js/embeddings-check.mjs}): the reply's shape and unit vectors, float and base64 (and
 * the SDK's own base64 decoding) giving the same floats, determinism, a batch equal to its inputs one at a time, and
 * {@code dimensions} other than the model's, or an empty input, surfacing as the SDK's BadRequestError.
 */
class OpenAiEmbeddingsIT {

    static final List<String> CHECKS = List.of("shape", "float_base64_equal", "deterministic", "batched_equals_single",
            "dimensions_refused", "empty_refused");

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(false);
        server = LocalServer.get();
    }

    @Test
    void openAiSdk_embeddings_passEveryCheckAgainstThePackagedServer() throws Exception {
        NodeScripts.assertEveryCheckPasses("embeddings-check.mjs", Duration.ofMinutes(2), server, CHECKS);
    }
}
