package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.Test;

/** The README's embedding example ({@code docs/examples/EmbedExample.java}) runs as written, with the packaged app's jars. */
class EmbedExampleIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();

    @Test
    void theEmbeddingExample_chatsAndStreamsTheSameGreedyText() throws Exception {
        Path app = Path.of(System.getProperty("juno.coordinator.app", ROOT.resolve("coordinator-service/target/quarkus-app").toString()));
        Shell.Result r = Shell.run(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-cp", app.resolve("app") + "/*:" + app.resolve("lib/main") + "/*", "docs/examples/EmbedExample.java", "models/stories260K.gguf"),
                ROOT, Map.of(), Duration.ofMinutes(2));
        assertEquals(0, r.exitCode(), r.describe());
        String chat = r.out().lines().filter(l -> l.startsWith("chat: ")).findFirst().orElseThrow().substring(6);
        String stream = r.out().lines().filter(l -> l.startsWith("stream: ")).findFirst().orElseThrow().substring(8);
        assertFalse(chat.isBlank(), r.describe());
        assertEquals(chat, stream, "the streamed pieces make the chat's greedy answer");
    }
}
