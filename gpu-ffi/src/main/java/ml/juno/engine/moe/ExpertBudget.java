package ml.juno.engine.moe;

import java.util.Locale;

/**
 * The RAM tier's size for streamed experts ({@code --expert-cache SIZE}, env {@value #ENV}): a byte count
 * ({@code 0}, {@code 4096}, {@code 512MiB}, {@code 2GiB}, {@code 1.5GB}; {@code K/M/G/T} and {@code KiB/MiB/GiB/TiB} are
 * powers of 1024, {@code KB/MB/GB/TB} powers of 1000) or a share of what holding every routed expert takes ({@code 25%}, {@code 100%}: all fit). Exactly one
 * of {@code bytes} ({@code >= 0}, else {@code -1}) and {@code percent} ({@code 0..100}, else {@code -1}) is set.
 */
public record ExpertBudget(long bytes, double percent) {
    /** The environment variable the engine reads when the property is absent. */
    public static final String ENV = "JUNO_EXPERT_CACHE";
    /** The system property {@code --expert-cache} sets (in this JVM, and passed to the apps it starts). */
    public static final String PROPERTY = "juno.expert-cache";

    public ExpertBudget {
        boolean asBytes = bytes >= 0 && percent == -1;
        boolean asShare = bytes == -1 && percent >= 0 && percent <= 100;
        if (!asBytes && !asShare) {
            throw new IllegalArgumentException("bad expert cache budget: " + bytes + " bytes, " + percent + "%");
        }
    }

    public static ExpertBudget ofBytes(long bytes) {
        return new ExpertBudget(bytes, -1);
    }

    /**
     * {@code text} as the flag takes it.
     *
     * @throws IllegalArgumentException saying what is accepted
     */
    public static ExpertBudget parse(String text) {
        String t = text == null ? "" : text.trim();
        try {
            if (t.endsWith("%")) {
                double p = Double.parseDouble(t.substring(0, t.length() - 1).trim());
                if (!(p >= 0 && p <= 100)) {
                    throw new NumberFormatException();
                }
                return new ExpertBudget(-1, p);
            }
            int i = 0;
            while (i < t.length() && (Character.isDigit(t.charAt(i)) || t.charAt(i) == '.')) {
                i++;
            }
            double n = Double.parseDouble(t.substring(0, i));
            long unit = unit(t.substring(i).trim().toLowerCase(Locale.ROOT));
            double b = n * unit;
            if (unit < 0 || !(b >= 0) || b > Long.MAX_VALUE / 2) {
                throw new NumberFormatException();
            }
            return ofBytes((long) b);
        } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("bad expert cache size '" + text
                    + "': give bytes with an optional unit (0, 512MiB, 2GiB, 1.5GB) or a share of the expert bytes (25%)");
        }
    }

    private static long unit(String u) {
        return switch (u) {
            case "", "b" -> 1;
            case "k", "kib" -> 1L << 10;
            case "m", "mib" -> 1L << 20;
            case "g", "gib" -> 1L << 30;
            case "t", "tib" -> 1L << 40;
            case "kb" -> 1_000L;
            case "mb" -> 1_000_000L;
            case "gb" -> 1_000_000_000L;
            case "tb" -> 1_000_000_000_000L;
            default -> -1;
        };
    }

    /**
     * What this process was asked for: {@value #PROPERTY}, else {@value #ENV}; {@code null} when neither is set (or
     * is blank): experts stay memory-mapped.
     *
     * @throws IllegalArgumentException for a value {@link #parse} refuses, naming where it came from
     */
    public static ExpertBudget requested() {
        String p = System.getProperty(PROPERTY);
        String v = p != null ? p : System.getenv(ENV);
        if (v == null || v.isBlank()) {
            return null;
        }
        try {
            return parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((p != null ? "-D" + PROPERTY : ENV) + ": " + e.getMessage());
        }
    }

    /** The budget in bytes where holding every routed expert takes {@code expertBytes}. */
    public long resolve(long expertBytes) {
        return bytes >= 0 ? bytes : (long) Math.floor(expertBytes * percent / 100);
    }

    @Override
    public String toString() {
        return bytes >= 0 ? bytes + " B" : percent + "%";
    }
}
