package ml.juno.cli;

import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code juno chat --url URL}: the terminal chat against a Juno server that is already running. */
@Command(name = "chat", mixinStandardHelpOptions = true,
        description = "Chat on the terminal with a running Juno server (streamed answers, /reset, /stats, /help, /exit).")
final class ChatCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--url", defaultValue = "${env:JUNO_URL:-http://127.0.0.1:8080}", description = "The server (default: ${DEFAULT-VALUE}, env JUNO_URL).")
    String url;

    @Option(names = "--model", description = "Model to ask (default: the one the server serves).")
    String model;

    @Option(names = "--system", paramLabel = "TEXT", description = "A system message at the start of every conversation.")
    String system;

    @Option(names = "--api-key", paramLabel = "KEY", defaultValue = "${env:JUNO_API_KEY}", description = "Sent as a bearer token (env JUNO_API_KEY).")
    String apiKey;

    @Option(names = "--max-tokens", paramLabel = "N", description = "Tokens an answer may have at most (default: the server's).")
    Integer maxTokens;

    @Override
    public Integer call() {
        if (maxTokens != null && maxTokens < 1) {
            throw new CliException("--max-tokens must be >= 1, got " + maxTokens);
        }
        URI base;
        try {
            base = URI.create(url);
            if (base.getScheme() == null || !base.getScheme().startsWith("http") || base.getHost() == null) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
        } catch (IllegalArgumentException e) {
            throw new CliException("--url '" + url + "': " + e.getMessage());
        }
        TerminalChat chat = new TerminalChat(base, model, apiKey, system, maxTokens, spec.commandLine().getOut());
        try (TerminalChat.Lines lines = TerminalChat.systemLines(Path.of(System.getProperty("user.home"), ".juno_history"))) {
            return chat.run(lines);
        }
    }
}
