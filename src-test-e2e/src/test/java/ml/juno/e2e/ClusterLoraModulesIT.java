package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.NodeProcesses;
import ml.juno.e2e.harness.RandomLora;
import org.junit.jupiter.api.Test;

/**
 * {@code juno coordinator --lora-modules} over real nodes, as a client sees it: the named adapter is listed in
 * {@code /v1/models} with its base as parent, and a request naming it gets the same greedy text as {@code juno local}
 * with the same adapter (and not the base model's).
 */
class ClusterLoraModulesIT {
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    static JsonNode post(AppLauncher s, String model) throws Exception {
        String body = "{\"model\":\"" + model + "\",\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":0}";
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(s.url("/v1/completions")).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body() + "\n" + s.log());
        return JSON.readTree(r.body());
    }

    static List<String> answers(AppLauncher s) throws Exception {
        List<String> out = new ArrayList<>();
        for (String model : List.of("stories260K", "tuned")) {
            out.add(post(s, model).path("choices").path(0).path("text").asText());
        }
        return out;
    }

    @Test
    void namedAdapter_isListedAndServedByTheCluster_asByJunoLocal() throws Exception {
        Path model = LivenessIT.MODELS.resolve("stories260K.gguf");
        Path adapter = Files.createTempFile(LivenessIT.MODELS, ".cluster-modules-", ".lora"); // inside the nodes' models directory
        try {
            RandomLora.write(adapter, model, 21);
            String modules = "tuned=" + adapter;
            List<String> local;
            int localPort = AppLauncher.freePort();
            try (AppLauncher s = AppLauncher.startCommand("juno-local-modules", localPort, LivenessIT.cli("local", "--model-path",
                    model.toString(), "--api-port", Integer.toString(localPort), "--lora-modules", modules), Duration.ofSeconds(60))) {
                LocalServer.awaitReady(s, Duration.ofSeconds(60));
                local = answers(s);
            }
            assertNotEquals(local.get(0), local.get(1), "the adapter changes the answer");
            try (NodeProcesses nodes = NodeProcesses.start("modules-node", 2)) {
                int port = AppLauncher.freePort();
                try (AppLauncher c = AppLauncher.startCommand("juno-coordinator-modules", port, LivenessIT.cli("coordinator", "--model-path",
                        model.toString(), "--nodes", String.join(",", nodes.addresses(2)), "--api-port", Integer.toString(port),
                        "--threads-per-node", "1", "--lora-modules", modules), Duration.ofSeconds(60))) {
                    LocalServer.awaitReady(c, Duration.ofSeconds(60));
                    HttpResponse<String> models = HTTP.send(HttpRequest.newBuilder(c.url("/v1/models")).build(), HttpResponse.BodyHandlers.ofString());
                    JsonNode tuned = null;
                    for (JsonNode m : JSON.readTree(models.body()).path("data")) {
                        if (m.path("id").asText().equals("tuned")) {
                            tuned = m;
                        }
                    }
                    assertTrue(tuned != null && tuned.path("parent").asText().equals("stories260K"), models.body());
                    assertEquals(local, answers(c), "the cluster's base and adapter answers equal juno local's");
                }
            }
        } finally {
            Files.deleteIfExists(adapter);
        }
    }
}
