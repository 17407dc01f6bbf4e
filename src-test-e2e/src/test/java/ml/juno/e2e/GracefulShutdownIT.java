package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM to {@code juno local --drain-timeout 30s} while a stream runs: new requests are refused, the running stream
 * still finishes ({@code length}, {@code [DONE]}), then the launcher and its server exit.
 */
class GracefulShutdownIT {

    @Test
    void sigterm_drainsTheRunningStream_refusesNewRequests_thenExits() throws Exception {
        Path model = Path.of(System.getProperty("juno.models.dir", "../models"), "testdata/tiny-random/tiny-llama-random-F16.gguf").toAbsolutePath();
        HttpClient http = HttpClient.newHttpClient();
        try (AppLauncher server = LocalServer.start(model, "-Xmx128m", "--drain-timeout", "30s")) {
            String body = "{\"model\":\"tiny-llama-random-F16\",\"prompt\":\"Once upon a time\",\"max_tokens\":480,\"temperature\":0,\"n\":6,\"stream\":true}";
            HttpResponse<InputStream> stream = http.send(HttpRequest.newBuilder(server.url("/v1/completions"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, stream.statusCode());
            List<String> events = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger refusedStatus = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicBoolean streaming = new java.util.concurrent.atomic.AtomicBoolean(true);
            Thread prober = Thread.ofVirtual().unstarted(() -> {
                // new requests while the stream still runs: refused once the drain has begun (503, or the listener closed)
                while (streaming.get() && refusedStatus.get() == 0) {
                    try {
                        int st = http.send(HttpRequest.newBuilder(server.url("/v1/models")).timeout(Duration.ofSeconds(5)).build(),
                                HttpResponse.BodyHandlers.discarding()).statusCode();
                        if (st != 200 && streaming.get()) {
                            refusedStatus.set(st);
                        }
                        Thread.sleep(50);
                    } catch (java.io.IOException closed) {
                        if (streaming.get()) {
                            refusedStatus.set(-1);
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            long termAt = 0;
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (!line.startsWith("data:")) {
                        continue;
                    }
                    events.add(line);
                    if (events.size() == 3) {
                        assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(server.process().pid())).start().waitFor());
                        termAt = System.nanoTime();
                        prober.start();
                    }
                }
            } finally {
                streaming.set(false);
            }
            prober.join(10_000);
            assertTrue(termAt != 0, "ended before SIGTERM: " + events);
            assertTrue(events.getLast().contains("[DONE]"), "the stream finished: " + events.subList(Math.max(0, events.size() - 3), events.size()));
            assertTrue(events.stream().anyMatch(e -> e.contains("\"finish_reason\":\"length\"")), "ran to its length after SIGTERM\n" + server.log());
            assertTrue(events.size() > 6 * 400, "generated on after SIGTERM: " + events.size() + " events");
            assertTrue(refusedStatus.get() == 503 || refusedStatus.get() == -1, "a new request during the drain got " + refusedStatus.get());
            assertTrue(server.process().waitFor(20, TimeUnit.SECONDS), "the launcher exited");
            System.out.println("drain: " + events.size() + " events, the last " + (System.nanoTime() - termAt) / 1_000_000
                    + " ms after SIGTERM; a new request got " + refusedStatus.get());
        }
    }
}
