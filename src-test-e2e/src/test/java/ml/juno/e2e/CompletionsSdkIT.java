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
 * The packaged server on the bundled stories260K driven by the official {@code openai} npm SDK
 * ({@code js/completions-check.mjs}): echo with the prompt's logprobs, prompt arrays (blocking and streamed),
 * {@code "usage": null} on every chunk but the last, chat logprobs that match the content a stop string cut (at a token
 * boundary and mid-token), best_of, and the refused parameters surfacing as the SDK's BadRequestError / NotFoundError.
 */
class CompletionsSdkIT {

    static final List<String> CHECKS = List.of("echo_logprobs", "prompt_array", "usage_null_until_last",
            "logprobs_match_content_with_stop", "best_of", "refused_parameters");

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(false);
        server = LocalServer.get();
    }

    @Test
    void openAiSdk_completionsAndStreamShape() throws Exception {
        NodeScripts.assertEveryCheckPasses("completions-check.mjs", Duration.ofMinutes(3), server, CHECKS);
    }
}
