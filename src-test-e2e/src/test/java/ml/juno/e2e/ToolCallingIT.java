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
 * Tool calling on the packaged server (bundled stories260K, built-in llama2 format, so the fallback tool prompt and
 * Hermes syntax), driven by the official {@code openai} npm SDK ({@code js/tools-check.mjs}): a forced call round
 * trip through {@code runTools}, {@code required} with {@code parallel_tool_calls: false}, streamed deltas reassembled
 * by the SDK equal to the blocking answer (seeded), the streaming {@code runTools}, and {@code tool_choice: none}.
 */
class ToolCallingIT {

    static final List<String> CHECKS = List.of("run_tools_round_trip", "required_calls_a_declared_function",
            "stream_reassembles_to_blocking", "streaming_run_tools", "tool_choice_none_is_plain_text");

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(false);
        server = LocalServer.get();
    }

    @Test
    void openAiSdkToolHelpers_workAgainstThePackagedServer() throws Exception {
        NodeScripts.assertEveryCheckPasses("tools-check.mjs", Duration.ofMinutes(3), server, CHECKS);
    }
}
