package ml.juno.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --drain-timeout}: on SIGTERM (or Ctrl-C) a server stops taking requests (new ones get 503), lets the running
 * ones finish for at most this long, then exits (Quarkus's {@code quarkus.shutdown.timeout}).
 */
final class DrainOption {

    @Option(names = "--drain-timeout", defaultValue = "${env:JUNO_DRAIN_TIMEOUT:-30s}", paramLabel = "DURATION",
            description = "On SIGTERM, let running requests finish for at most this long, taking no new ones (default: ${DEFAULT-VALUE}; 0s: stop at once).")
    String drainTimeout;

    Map<String, String> properties() {
        Duration d;
        try {
            d = Duration.parse("PT" + drainTimeout.strip().toUpperCase(java.util.Locale.ROOT));
        } catch (DateTimeParseException e) {
            throw new CliException("--drain-timeout '" + drainTimeout + "' is not a duration like 30s or 2m");
        }
        if (d.isNegative()) {
            throw new CliException("--drain-timeout must be >= 0");
        }
        return Map.of("quarkus.shutdown.timeout", d.toMillis() + "ms");
    }

    /** The drain time in milliseconds (0 when none). */
    long millis() {
        String v = properties().get("quarkus.shutdown.timeout");
        return v == null ? 0 : Long.parseLong(v.substring(0, v.length() - 2));
    }
}
