package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import org.junit.jupiter.api.Test;

/**
 * Clients that hang up (mid-body, mid-stream, before the answer) leave no ERROR line and no stack trace in the server's
 * log, and the server keeps serving.
 */
class QuietLogsIT {

    static String chat(boolean stream) {
        return "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}],\"max_tokens\":400,\"stream\":"
                + stream + "}";
    }

    static void send(int port, String head, byte[] body, int readBytes) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[readBytes];
            int got = 0;
            while (got < readBytes) {
                int n = in.read(buf, got, readBytes - got);
                if (n < 0) {
                    break;
                }
                got += n;
            }
        } // closed here: mid-stream, mid-body or before the answer
    }

    static String post(String path, int contentLength) {
        return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + contentLength + "\r\n\r\n";
    }

    @Test
    void hangups_leaveNoErrorAndNoStackTrace() throws Exception {
        Path model = Path.of(System.getProperty("juno.models.dir", "../models"), "stories260K.gguf").toAbsolutePath();
        try (AppLauncher server = LocalServer.start(model, "-Xmx128m")) {
            int port = server.port();
            for (int i = 0; i < 10; i++) {
                byte[] stream = chat(true).getBytes(StandardCharsets.UTF_8);
                send(port, post("/v1/chat/completions", stream.length), stream, 400);            // mid-stream
                byte[] whole = chat(false).getBytes(StandardCharsets.UTF_8);
                send(port, post("/v1/chat/completions", whole.length), whole, 0);               // before the answer
                byte[] part = chat(false).substring(0, 20).getBytes(StandardCharsets.UTF_8);
                send(port, post("/v1/chat/completions", part.length + 50), part, 0);            // mid-body
            }
            Thread.sleep(1500);
            String log = server.log();
            assertFalse(log.contains(" ERROR "), log);
            assertFalse(log.contains("\tat "), "no stack trace:\n" + log);
            assertFalse(log.contains("IllegalReferenceCountException"), log);
            assertEquals(200, java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(server.url("/q/health/ready")).build(),
                    java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode(), "still serving");
        }
    }
}
