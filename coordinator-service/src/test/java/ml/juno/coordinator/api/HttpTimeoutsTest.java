package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Connection time limits over a raw socket on the real port ({@link HttpTimeouts}, here 1 s each): a body shorter than
 * its Content-Length gets 408 and the connection closes; a request whose answer takes several times the bounds is not
 * cut, its kept-alive connection serves the next request, and once idle it is closed; headers that never end on a
 * kept-alive connection are cut; so is a new connection that sends nothing, or trickles its first headers a byte at a
 * time (each byte would restart an idle timer). A 408 logs one INFO line and nothing louder (the request's late failure, when its
 * handler tries to answer after the 408, used to be an ERROR "Response has already been written" with a stack trace).
 */
@QuarkusTest
@TestProfile(HttpTimeoutsTest.Short.class)
class HttpTimeoutsTest {

    public static final class Short implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("juno.http.body-timeout", "1s", "juno.http.keep-alive-timeout", "1s", "juno.http.header-timeout", "1s");
        }
    }

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    private static Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), RestAssured.port);
        s.setSoTimeout(120_000);
        return s;
    }

    /** Everything the server sends until it closes the connection (or 20 s pass: a failure). */
    private static String readToClose(InputStream in) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                got.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server kept the connection open; got so far: " + got.toString(StandardCharsets.UTF_8));
        }
        return got.toString(StandardCharsets.UTF_8);
    }

    /** Asserts the server closes the connection without sending anything, at least {@code minMs} from now (and within 10 s). */
    private static void closedSilently(InputStream in, long minMs, String bound) throws IOException {
        long t0 = System.nanoTime();
        assertEquals("", readToClose(in), "nothing sent before the close");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms >= minMs && ms < 10_000, "closed after " + bound + ": " + ms + " ms");
    }

    /** Records of WARNING and above, logged anywhere while it is installed. */
    static final class Warnings extends java.util.logging.Handler implements AutoCloseable {
        final java.util.List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();

        Warnings() {
            java.util.logging.Logger.getLogger("").addHandler(this);
        }

        @Override
        public void publish(java.util.logging.LogRecord r) {
            if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
                records.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            java.util.logging.Logger.getLogger("").removeHandler(this);
        }

        String describe() {
            StringBuilder b = new StringBuilder();
            for (var r : records) {
                b.append(r.getLevel()).append(' ').append(r.getLoggerName()).append(": ").append(r.getMessage())
                        .append(r.getThrown() == null ? "" : " / " + r.getThrown()).append('\n');
            }
            return b.toString();
        }
    }

    @Test
    void aBodyShorterThanItsContentLength_gets408AndTheConnectionCloses() throws Exception {
        try (Warnings warnings = new Warnings(); Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            String body = "{\"model\":\"stories260K\",\"prompt\":\"Once\"";
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + (body.length() + 40) + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long t0 = System.nanoTime();
            String reply = readToClose(s.getInputStream());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(reply.startsWith("HTTP/1.1 408"), reply);
            assertTrue(reply.contains("\"code\":\"request_timeout\"") && reply.contains(body.length() + " of its " + (body.length() + 40)), reply);
            assertTrue(ms >= 900 && ms < 10_000, "answered after the 1 s bound: " + ms + " ms");
            Thread.sleep(1500); // whatever the closed request still logs
            assertTrue(warnings.records.isEmpty(), "a 408 is an INFO line, nothing louder:\n" + warnings.describe());
        }
    }

    @Test
    void aLongAnswer_isNotCut_andItsConnectionServesTheNextRequest() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            // a whole reply that takes longer than the 1 s bounds: 16 choices of up to 400 tokens, sharing steps with 48 more
            String body = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":400,\"n\":16,\"temperature\":1,\"seed\":3}";
            var others = RequestTimeoutApiTest.background(body);
            long t0 = System.nanoTime();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String head = readHead(in);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
            assertTrue(readBody(head, in).contains("\"choices\""));
            assertTrue(ms > 1500, "the answer took longer than the bounds (else this proves nothing): " + ms + " ms");
            // the same connection still serves a request at once
            String small = "{\"text\":\"Once\"}";
            out.write(("POST /v1/tokenize HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + small.length() + "\r\n\r\n" + small).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String head2 = readHead(in);
            assertTrue(head2.startsWith("HTTP/1.1 200"), head2);
            assertTrue(readBody(head2, in).contains("tokens"));
            // then, idle, it is closed after about a second
            closedSilently(in, 900, "the 1 s keep-alive bound");
            others.get(120, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    void headersThatNeverEnd_onAKeptAliveConnection_areCut() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write("GET /q/health/live HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String head = readHead(in);
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
            readBody(head, in);
            out.write("GET /q/health/live HTTP/1.1\r\nHost: loc".getBytes(StandardCharsets.US_ASCII)); // and then nothing
            out.flush();
            closedSilently(in, 500, "the keep-alive bound");
        }
        assertEquals(200, given().get("/q/health/live").statusCode(), "the server is fine");
    }

    @Test
    void aNewConnectionThatSendsNothing_isClosedAfterTheHeaderBound() throws Exception {
        try (Socket s = connect()) {
            closedSilently(s.getInputStream(), 900, "the 1 s header bound");
        }
        assertEquals(200, given().get("/q/health/live").statusCode(), "the server is fine");
    }

    @Test
    void firstHeadersTrickledAByteAtATime_areCut() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("GET /q/health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Thread trickle = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < 200; i++) { // 40 s of one byte every 200 ms, far past every bound
                        Thread.sleep(200);
                        out.write('a');
                        out.flush();
                    }
                } catch (IOException | InterruptedException closed) {
                    // the server closed the connection: what is expected
                }
            });
            closedSilently(s.getInputStream(), 800, "the 1 s header bound although bytes kept coming");
            trickle.interrupt();
        }
        assertEquals(200, given().get("/q/health/live").statusCode(), "the server is fine");
    }

    /** The body after {@code head}: Content-Length bytes, or chunks up to the last. */
    private static String readBody(String head, InputStream in) throws IOException {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (m.find()) {
            return new String(in.readNBytes(Integer.parseInt(m.group(1))), StandardCharsets.UTF_8);
        }
        assertTrue(head.toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked"), head);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String size = line(in);
            int n = Integer.parseInt(size.strip(), 16);
            if (n == 0) {
                line(in); // the blank line after the last chunk
                return body.toString(StandardCharsets.UTF_8);
            }
            body.write(in.readNBytes(n));
            line(in);
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int c; (c = in.read()) >= 0 && c != '\n'; ) {
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }

    /** The status line and headers, up to the blank line. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new AssertionError("connection closed after: " + got.toString(StandardCharsets.US_ASCII));
            }
            got.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1 : 0;
        }
        return got.toString(StandardCharsets.US_ASCII);
    }
}
