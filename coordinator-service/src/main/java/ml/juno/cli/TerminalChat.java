package ml.juno.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The terminal chat: reads lines, sends the conversation so far to a Juno server's {@code /v1/chat/completions} as a
 * stream and prints the answer as it arrives. {@code /reset} forgets the conversation, {@code /stats} tells the last
 * answer's speed, {@code /help} lists the commands, {@code /exit} (or end of input) leaves. Used by {@code juno chat
 * --url …} and by {@code local}/{@code cluster} when they run on a terminal.
 */
final class TerminalChat {

    /** Where lines come from: JLine on a terminal, plain lines otherwise; null at the end of input. */
    interface Lines extends AutoCloseable {
        String read(String prompt);

        @Override
        default void close() {
        }
    }

    /** Tokens a chat answer of {@code local}/{@code cluster} may have when {@code --max-tokens} does not say. */
    static final int SERVER_CHAT_MAX_TOKENS = 512;

    static final String HELP = """
            Type a message and press Enter; the answer streams in. Commands:
              /reset   forget the conversation (a new session)
              /stats   speed of the last answer: tokens/s and time to first token; totals of the session
              /help    this text
              /exit    leave (also Ctrl-D)""";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI chatUrl;
    private final String model;
    private final String apiKey;
    private final String system;
    private final Integer maxTokens;
    private final PrintWriter out;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<ObjectNode> history = new ArrayList<>();

    private int lastTokens;
    private double lastSeconds;
    private double lastFirstTokenMs;
    private int answers;
    private long sessionTokens;

    /**
     * @param base   the server, e.g. {@code http://127.0.0.1:8080}
     * @param model  the model to name in requests, or null for the served one
     * @param apiKey sent as {@code Authorization: Bearer …}, or null
     * @param system    a system message opening every session, or null
     * @param maxTokens tokens an answer may have at most, or null for the server's default
     */
    TerminalChat(URI base, String model, String apiKey, String system, Integer maxTokens, PrintWriter out) {
        String b = base.toString();
        this.chatUrl = URI.create((b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + "/v1/chat/completions");
        this.model = model;
        this.apiKey = apiKey;
        this.system = system;
        this.maxTokens = maxTokens;
        this.out = out;
    }

    /** Runs the conversation until {@code /exit} or the end of input; returns the exit code (0). */
    int run(Lines lines) {
        out.println("Chat with " + (model != null ? model : "the served model") + " at " + chatUrl.resolve("/")
                + " ('/help' for commands, '/exit' to leave).");
        out.flush();
        while (true) {
            String line = lines.read("> ");
            if (line == null) {
                out.println();
                out.flush();
                return 0;
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            switch (line) {
                case "/exit", "/quit" -> {
                    return 0;
                }
                case "/reset" -> {
                    history.clear();
                    out.println("(conversation forgotten)");
                }
                case "/stats" -> out.println(stats());
                case "/help" -> out.println(HELP);
                default -> {
                    if (line.startsWith("/")) {
                        out.println("unknown command " + line + "; '/help' lists them");
                    } else {
                        answer(line);
                    }
                }
            }
            out.flush();
        }
    }

    /** The last answer's speed and the session's totals. */
    String stats() {
        if (answers == 0) {
            return "no answer yet";
        }
        return String.format(Locale.ROOT, "last answer: %d tokens in %.2f s (%.1f tokens/s), time to first token %.0f ms; "
                        + "session: %d answers, %d tokens, %d messages in the conversation", lastTokens, lastSeconds,
                lastSeconds > 0 ? lastTokens / lastSeconds : 0, lastFirstTokenMs, answers, sessionTokens, history.size());
    }

    private void answer(String text) {
        ObjectNode user = message("user", text);
        history.add(user);
        ObjectNode body = JSON.createObjectNode();
        if (model != null) {
            body.put("model", model);
        }
        ArrayNode messages = body.putArray("messages");
        if (system != null) {
            messages.add(message("system", system));
        }
        history.forEach(messages::add);
        if (maxTokens != null) {
            body.put("max_tokens", maxTokens);
        }
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        HttpRequest.Builder request = HttpRequest.newBuilder(chatUrl).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        long t0 = System.nanoTime();
        long first = 0;
        int tokens = 0;
        StringBuilder reply = new StringBuilder();
        String error = null;
        try {
            HttpResponse<Stream<String>> r = http.send(request.build(), HttpResponse.BodyHandlers.ofLines());
            if (r.statusCode() != 200) {
                error = errorMessage(r.statusCode(), String.join("\n", r.body().toList()));
            } else {
                try (Stream<String> events = r.body()) {
                    for (String line : (Iterable<String>) events::iterator) {
                        if (!line.startsWith("data: ") || line.equals("data: [DONE]")) {
                            continue;
                        }
                        JsonNode chunk = JSON.readTree(line.substring(6));
                        if (chunk.has("error")) {
                            error = chunk.get("error").path("message").asText("the generation failed");
                            continue;
                        }
                        JsonNode usage = chunk.get("usage");
                        if (usage != null && !usage.isNull()) {
                            tokens = usage.path("completion_tokens").asInt(tokens);
                        }
                        JsonNode choices = chunk.path("choices");
                        if (choices.isEmpty()) {
                            continue;
                        }
                        String piece = choices.get(0).path("delta").path("content").asText("");
                        if (!piece.isEmpty()) {
                            if (first == 0) {
                                first = System.nanoTime();
                            }
                            reply.append(piece);
                            out.print(piece);
                            out.flush();
                        }
                    }
                }
            }
        } catch (IOException | UncheckedIOException e) {
            error = "cannot reach " + chatUrl.resolve("/") + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = "interrupted";
        }
        if (error != null) {
            history.remove(history.size() - 1); // the question was not answered; ask again or /reset
            out.println((reply.isEmpty() ? "" : "\n") + "error: " + error);
            return;
        }
        out.println();
        history.add(message("assistant", reply.toString()));
        long end = System.nanoTime();
        lastTokens = tokens;
        lastSeconds = (end - t0) / 1e9;
        lastFirstTokenMs = first == 0 ? 0 : (first - t0) / 1e6;
        answers++;
        sessionTokens += tokens;
    }

    private static ObjectNode message(String role, String content) {
        ObjectNode m = JSON.createObjectNode();
        m.put("role", role);
        m.put("content", content);
        return m;
    }

    private static String errorMessage(int status, String body) {
        try {
            JsonNode e = JSON.readTree(body).path("error");
            if (e.has("message")) {
                return e.get("message").asText() + " (HTTP " + status + ")";
            }
        } catch (IOException notJson) {
            // fall through
        }
        return "HTTP " + status;
    }

    /** Lines from a terminal through JLine (editing, history in {@code historyFile}), else plain lines from stdin. */
    static Lines systemLines(Path historyFile) {
        java.io.Console console = System.console();
        if (console != null && console.isTerminal()) {
            try {
                org.jline.terminal.Terminal terminal = org.jline.terminal.TerminalBuilder.builder().system(true).build();
                org.jline.reader.LineReader reader = org.jline.reader.LineReaderBuilder.builder().terminal(terminal).appName("juno")
                        .variable(org.jline.reader.LineReader.HISTORY_FILE, historyFile).build();
                return new Lines() {
                    @Override
                    public String read(String prompt) {
                        try {
                            return reader.readLine(prompt);
                        } catch (org.jline.reader.UserInterruptException | org.jline.reader.EndOfFileException e) {
                            return null;
                        }
                    }

                    @Override
                    public void close() {
                        try {
                            reader.getHistory().save();
                            terminal.close();
                        } catch (IOException ignored) {
                            // history is a convenience
                        }
                    }
                };
            } catch (IOException | RuntimeException noTerminal) {
                // plain lines below
            }
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        return prompt -> {
            try {
                return in.readLine();
            } catch (IOException e) {
                return null;
            }
        };
    }

    /** True when stdin and stdout are a terminal: {@code local} and {@code cluster} then open the chat. */
    static boolean onTerminal() {
        java.io.Console console = System.console();
        return console != null && console.isTerminal();
    }
}
