package ml.juno.coordinator.security;

import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Per-key rate limits over Resilience4j's {@link AtomicRateLimiter} (a lock-free token bucket refilled every minute).
 * Requests take one permission each when they arrive and are refused when none is left. Tokens are only known once a
 * request has run, so they are charged afterwards ({@link #charge}: the bucket may go into debt) and a key whose
 * token bucket is empty or in debt gets no new generation until it refills. A refusal says how long to wait.
 */
public final class KeyLimits {

    /** The outcome of {@link #admit}: allowed, or refused with the wait and which limit refused. */
    public record Decision(boolean allowed, Duration retryAfter, String limit) {
        static final Decision ALLOWED = new Decision(true, Duration.ZERO, "");
    }

    private record Buckets(AtomicRateLimiter requests, AtomicRateLimiter tokens) {
    }

    private static final Duration PERIOD = Duration.ofMinutes(1);
    private static final int MAX_KEYS = 100_000;

    private final RateLimitSpec spec;
    private final ConcurrentMap<String, Buckets> byKey = new ConcurrentHashMap<>();
    private final RateLimiterConfig requestConfig;
    private final RateLimiterConfig tokenConfig;

    public KeyLimits(RateLimitSpec spec) {
        this.spec = spec;
        this.requestConfig = spec.limitsRequests() ? RateLimiterConfig.custom().limitForPeriod(spec.requestsPerMinute())
                .limitRefreshPeriod(PERIOD).timeoutDuration(Duration.ZERO).build() : null;
        // charging never waits, but a charge may push the bucket into debt: allow reservations far ahead
        this.tokenConfig = spec.limitsTokens() ? RateLimiterConfig.custom().limitForPeriod((int) spec.tokensPerMinute())
                .limitRefreshPeriod(PERIOD).timeoutDuration(Duration.ofDays(365)).build() : null;
    }

    public RateLimitSpec spec() {
        return spec;
    }

    public boolean active() {
        return spec.limitsRequests() || spec.limitsTokens();
    }

    /** Takes a request permission of {@code key} ({@code generates}: the request will produce tokens). */
    public Decision admit(String key, boolean generates) {
        if (!active()) {
            return Decision.ALLOWED;
        }
        Buckets b = buckets(key);
        if (generates && b.tokens() != null && b.tokens().getMetrics().getAvailablePermissions() <= 0) {
            return new Decision(false, waitOf(b.tokens()), "tokens per minute (" + spec.tokensPerMinute() + ")");
        }
        if (b.requests() != null && !b.requests().acquirePermission()) {
            return new Decision(false, waitOf(b.requests()), "requests per minute (" + spec.requestsPerMinute() + ")");
        }
        return Decision.ALLOWED;
    }

    /** Charges {@code tokens} a request of {@code key} used to its token bucket. */
    public void charge(String key, long tokens) {
        if (!spec.limitsTokens() || tokens <= 0) {
            return;
        }
        AtomicRateLimiter bucket = buckets(key).tokens();
        long left = tokens;
        int most = (int) spec.tokensPerMinute();
        while (left > 0) {
            int part = (int) Math.min(left, most);
            bucket.reservePermission(part);
            left -= part;
        }
    }

    /** Token permissions {@code key} has left this minute (negative: in debt); for tests and diagnostics. */
    public long tokensLeft(String key) {
        Buckets b = buckets(key);
        return b.tokens() == null ? Long.MAX_VALUE : b.tokens().getMetrics().getAvailablePermissions();
    }

    private static Duration waitOf(AtomicRateLimiter limiter) {
        long nanos = limiter.getDetailedMetrics().getNanosToWait();
        return Duration.ofNanos(Math.max(nanos, 1_000_000L));
    }

    private Buckets buckets(String key) {
        Buckets b = byKey.get(key);
        if (b != null) {
            return b;
        }
        if (byKey.size() >= MAX_KEYS) {
            byKey.clear(); // names come from the key set, so this only happens with a huge key file; never unbounded
        }
        return byKey.computeIfAbsent(key, k -> new Buckets(
                requestConfig == null ? null : new AtomicRateLimiter("juno-rpm-" + k, requestConfig),
                tokenConfig == null ? null : new AtomicRateLimiter("juno-tpm-" + k, tokenConfig)));
    }
}
