package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The terminal chat ({@code juno chat}) against the API on the bundled model (the API tests' boot). */
@QuarkusTest
class TerminalChatTest {

    @TestHTTPResource("/")
    URI base;

    @BeforeEach
    void ready() throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L; // the model loads in the background
        while (System.nanoTime() < deadline && io.restassured.RestAssured.given().get("/q/health/ready").statusCode() != 200) {
            Thread.sleep(50);
        }
    }

    static String chat(URI base, List<String> input) {
        StringWriter out = new StringWriter();
        Iterator<String> lines = input.iterator();
        int rc = new TerminalChat(base, null, null, null, 24, new PrintWriter(out, true)).run(prompt -> lines.hasNext() ? lines.next() : null);
        assertEquals(0, rc);
        return out.toString();
    }

    @Test
    void aConversation_streamsAnswers_keepsHistory_andAnswersItsCommands() {
        String out = chat(base, List.of("/stats", "Once upon a time", "", "/stats", "and then?", "/stats", "/reset", "/stats", "/bogus", "/help", "/exit",
                "never read"));
        assertTrue(out.startsWith("Chat with the served model at " + base), out);
        assertTrue(out.contains("no answer yet"), out);
        assertTrue(out.contains("session: 1 answers") && out.contains("2 messages in the conversation"), out);
        assertTrue(out.contains("session: 2 answers") && out.contains("4 messages in the conversation"), "history kept: " + out);
        assertTrue(out.contains("(conversation forgotten)") && out.contains("0 messages in the conversation"), out);
        assertTrue(out.matches("(?s).*last answer: [1-9][0-9]* tokens in [0-9.]+ s \\([0-9.]+ tokens/s\\), time to first token [0-9]+ ms.*"), out);
        assertTrue(out.contains("unknown command /bogus"), out);
        assertTrue(out.contains("/reset   forget the conversation"), out);
        assertTrue(!out.contains("never read"), "/exit ends the chat");
    }

    @Test
    void aServerError_isOneLine_andTheQuestionIsNotKept() {
        String out = chat(base, List.of("x".repeat(600_000), "/stats"));
        assertTrue(out.contains("error: ") && out.contains("(HTTP 400)"), out);
        assertTrue(out.contains("no answer yet"), out);
        String down = chat(URI.create("http://127.0.0.1:1"), List.of("Hello"));
        assertTrue(down.contains("error: cannot reach http://127.0.0.1:1/"), down);
    }
}
