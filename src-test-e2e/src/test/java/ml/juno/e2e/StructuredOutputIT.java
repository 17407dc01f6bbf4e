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
 * Structured output on the packaged server and the bundled stories260K through the official {@code openai} npm SDK
 * ({@code js/structured-check.mjs}): {@code response_format} json_schema on 20 random prompts (every answer parses
 * and validates against the schema), the SDK's {@code parse} helper, streamed n = 2, json_object, the GBNF
 * {@code grammar} field on chat and completions, and 400s naming the field.
 */
class StructuredOutputIT {

    static final List<String> CHECKS = List.of("json_schema_20_prompts", "sdk_parse_helper", "json_schema_streaming_n2",
            "json_object", "grammar_field", "errors_name_the_field");

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(false);
        server = LocalServer.get();
    }

    @Test
    void structuredOutput_parsesAndValidatesThroughTheSdk() throws Exception {
        NodeScripts.assertEveryCheckPasses("structured-check.mjs", Duration.ofMinutes(4), server, CHECKS);
    }
}
