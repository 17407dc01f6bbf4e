package ml.juno.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.security.ApiKeys;
import ml.juno.coordinator.security.RateLimitSpec;
import picocli.CommandLine.Option;

/**
 * Who may use a server's API: {@code --api-key-file}, {@code --api-key}, {@code --metrics-public}, {@code --rate-limit},
 * {@code --max-concurrent-per-key}, {@code --request-timeout}
 * (the servers: {@code local}, {@code cluster}, {@code coordinator}). Keys reach the server JVM through its environment
 * ({@code JUNO_API_KEYS}), never on its command line, where {@code ps} would show them.
 */
final class ApiAccessOptions {

    @Option(names = "--api-key-file", paramLabel = "FILE", defaultValue = "${env:JUNO_API_KEY_FILE}", description = "API keys, one a line (name:key or key; # comments); "
            + "re-read when the file changes, so a removed key stops working. With keys set, /v1 and /q/metrics need 'Authorization: Bearer KEY' "
            + "(env JUNO_API_KEY_FILE).")
    Path keyFile;

    @Option(names = "--api-key", paramLabel = "KEY", description = "An API key (name:key or key); repeatable. Also env JUNO_API_KEYS (comma-separated).")
    List<String> keys = List.of();

    @Option(names = "--metrics-public", description = "Serve /q/metrics without a key even when keys are set.")
    boolean metricsPublic;

    @Option(names = "--rate-limit", paramLabel = "LIMITS", defaultValue = "${env:JUNO_RATE_LIMIT}", description = "Per-key limits, e.g. 60rpm,200000tpm (requests and tokens per minute); "
            + "past them 429 with Retry-After (env JUNO_RATE_LIMIT).")
    String rateLimit;

    @Option(names = "--max-concurrent-per-key", paramLabel = "N", defaultValue = "${env:JUNO_MAX_CONCURRENT_PER_KEY:-0}",
            description = "At most N generation requests (streamed or not) of one key at once; one more gets 429 (0: no limit; "
                    + "env JUNO_MAX_CONCURRENT_PER_KEY).")
    int maxConcurrentPerKey;

    @Option(names = "--request-timeout", paramLabel = "DURATION", defaultValue = "${env:JUNO_REQUEST_TIMEOUT:-0s}",
            description = "Time limit of one generation request from its arrival, queueing included, e.g. 10m; past it the "
                    + "generation stops and frees its memory: a whole reply is a 504 request_timeout, a stream ends with an error "
                    + "event (default: ${DEFAULT-VALUE}, no limit; env JUNO_REQUEST_TIMEOUT).")
    String requestTimeout;

    /** The server's {@code juno.api.*} system properties; bad values are a one-line error. */
    Map<String, String> properties() {
        Map<String, String> props = new LinkedHashMap<>();
        if (keyFile != null) {
            if (!Files.isRegularFile(keyFile) || !Files.isReadable(keyFile)) {
                throw new CliException("--api-key-file " + keyFile + " is not a readable file");
            }
            props.put("juno.api.key-file", keyFile.toAbsolutePath().toString());
        }
        if (metricsPublic) {
            props.put("juno.api.metrics-public", "true");
        }
        if (rateLimit != null) {
            try {
                RateLimitSpec.parse(rateLimit);
            } catch (IllegalArgumentException e) {
                throw new CliException(e.getMessage());
            }
            props.put("juno.api.rate-limit", rateLimit);
        }
        if (maxConcurrentPerKey < 0) {
            throw new CliException("--max-concurrent-per-key must be >= 0 (0: no limit), got " + maxConcurrentPerKey);
        }
        if (maxConcurrentPerKey > 0) {
            props.put("juno.api.max-concurrent-per-key", Integer.toString(maxConcurrentPerKey));
        }
        java.time.Duration timeout;
        try {
            timeout = java.time.Duration.parse("PT" + requestTimeout.strip().toUpperCase(java.util.Locale.ROOT));
        } catch (java.time.format.DateTimeParseException e) {
            throw new CliException("--request-timeout '" + requestTimeout + "' is not a duration like 90s or 10m");
        }
        if (timeout.isNegative()) {
            throw new CliException("--request-timeout must be >= 0 (0: no limit), got " + requestTimeout);
        }
        if (timeout.isPositive()) {
            props.put("juno.api.request-timeout", timeout.toMillis() + "ms");
        }
        environment(); // bad keys fail here, before anything starts
        return props;
    }

    /** The server's environment additions: {@code JUNO_API_KEYS} with the {@code --api-key}s and any inherited ones. */
    Map<String, String> environment() {
        StringBuilder all = new StringBuilder();
        String inherited = System.getenv("JUNO_API_KEYS");
        if (inherited != null && !inherited.isBlank()) {
            all.append(inherited);
        }
        for (String k : keys) {
            if (!all.isEmpty()) {
                all.append(',');
            }
            all.append(k);
        }
        if (all.isEmpty()) {
            return Map.of();
        }
        try {
            ApiKeys.parse(all.toString(), true, "--api-key / JUNO_API_KEYS");
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        return Map.of("JUNO_API_KEYS", all.toString());
    }

    /**
     * The key the terminal chat of this server presents: env {@code JUNO_API_KEY}, else the first {@code --api-key} (or
     * {@code JUNO_API_KEYS} entry), else the first key of {@code --api-key-file}; null when no key is set (none needed).
     */
    String chatKey() {
        String own = System.getenv("JUNO_API_KEY");
        if (own != null && !own.isBlank()) {
            return own.strip();
        }
        List<String> entries = new java.util.ArrayList<>(keys);
        String inherited = System.getenv("JUNO_API_KEYS");
        if (inherited != null) {
            entries.addAll(List.of(inherited.split("[\\r\\n,]+")));
        }
        if (keyFile != null) {
            try {
                entries.addAll(Files.readAllLines(keyFile));
            } catch (java.io.IOException unreadable) {
                // properties() has refused it already
            }
        }
        for (String raw : entries) {
            String line = raw.strip();
            if (!line.isEmpty() && !line.startsWith("#")) {
                int colon = line.indexOf(':'); // as ApiKeys reads an entry: name:key or key
                return colon > 0 ? line.substring(colon + 1).strip() : line;
            }
        }
        return null;
    }
}
