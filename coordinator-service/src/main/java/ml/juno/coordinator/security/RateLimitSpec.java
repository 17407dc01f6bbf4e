package ml.juno.coordinator.security;

/**
 * Per-key limits, as {@code --rate-limit} spells them: comma-separated {@code Nrpm} (requests per minute) and
 * {@code Ntpm} (tokens per minute: prompt plus completion), either or both; {@code 0} or absent means no limit.
 */
public record RateLimitSpec(int requestsPerMinute, long tokensPerMinute) {

    public static final RateLimitSpec NONE = new RateLimitSpec(0, 0);

    public RateLimitSpec {
        if (requestsPerMinute < 0 || tokensPerMinute < 0) {
            throw new IllegalArgumentException("rate limits must be >= 0");
        }
    }

    public boolean limitsRequests() {
        return requestsPerMinute > 0;
    }

    public boolean limitsTokens() {
        return tokensPerMinute > 0;
    }

    /** @throws IllegalArgumentException naming the part that is not {@code Nrpm} or {@code Ntpm} */
    public static RateLimitSpec parse(String text) {
        if (text == null || text.isBlank()) {
            return NONE;
        }
        int rpm = 0;
        long tpm = 0;
        boolean seenR = false;
        boolean seenT = false;
        for (String raw : text.split(",")) {
            String part = raw.strip().toLowerCase(java.util.Locale.ROOT);
            if (part.endsWith("rpm") && !seenR) {
                rpm = (int) number(part, 3, Integer.MAX_VALUE, text);
                seenR = true;
            } else if (part.endsWith("tpm") && !seenT) {
                tpm = number(part, 3, Integer.MAX_VALUE, text);
                seenT = true;
            } else {
                throw new IllegalArgumentException("--rate-limit '" + text + "': '" + raw.strip()
                        + "' is not Nrpm or Ntpm (each at most once), e.g. 60rpm,200000tpm");
            }
        }
        return new RateLimitSpec(rpm, tpm);
    }

    private static long number(String part, int suffix, long max, String text) {
        String digits = part.substring(0, part.length() - suffix).strip().replace("_", "");
        try {
            long n = Long.parseLong(digits);
            if (n < 0 || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--rate-limit '" + text + "': '" + part + "' needs a whole number 0.." + max);
        }
    }

    @Override
    public String toString() {
        return requestsPerMinute + "rpm," + tokensPerMinute + "tpm";
    }
}
