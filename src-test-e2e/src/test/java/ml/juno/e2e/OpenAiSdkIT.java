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
 * The packaged server, a real process on the bundled stories260K, driven by the official {@code openai} npm SDK
 * ({@code js/sdk-check.mjs}): chat blocking and streaming, completions, usage in the stream, stop strings, seed
 * reproducibility, n = 2, and errors surfacing as the SDK's BadRequestError / NotFoundError.
 */
class OpenAiSdkIT {

    static final List<String> CHECKS = List.of("chat_blocking", "chat_streaming", "stream_usage", "completions", "stop",
            "seed_reproducible", "n_2", "bad_request", "models");

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(false);
        server = LocalServer.get();
    }

    @Test
    void openAiSdk_passesEveryCheckAgainstThePackagedServer() throws Exception {
        NodeScripts.assertEveryCheckPasses("sdk-check.mjs", Duration.ofMinutes(3), server, CHECKS);
    }
}
