package ml.juno.coordinator.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import ml.juno.coordinator.api.dto.ErrorResponse;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.security.ApiKeyRing;
import ml.juno.coordinator.security.ApiKeys;
import ml.juno.coordinator.security.BindAddress;
import ml.juno.coordinator.security.KeyConcurrency;
import ml.juno.coordinator.security.KeyLimits;
import ml.juno.coordinator.security.RateLimitSpec;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The API's front door, a Vert.x filter in front of every route: with API keys configured ({@code juno.api.key-file},
 * {@code juno.api.keys} / {@code JUNO_API_KEYS}) every request needs {@code Authorization: Bearer KEY} except
 * liveness/readiness, the console's static files and (with {@code juno.api.metrics-public}) {@code /q/metrics};
 * others get 401 in OpenAI's error shape. Then the key's rate limits ({@code juno.api.rate-limit}): 429
 * {@code rate_limit_exceeded} with {@code Retry-After}. The key's name (never the key) goes to the request's context,
 * to logs and to per-key metrics; the logic lives in {@code ml.juno.coordinator.security}.
 */
@Startup
@ApplicationScoped
public class ApiGate {

    private static final Logger LOG = Logger.getLogger(ApiGate.class);
    /** Name of the caller's key in the routing context. */
    static final String KEY_NAME = "juno.api.key-name";
    /** The caller's name when no keys are configured. */
    public static final String ANONYMOUS = "anonymous";
    private static final Set<String> CONSOLE = Set.of("/", "/index.html", "/console.js", "/console.css", "/favicon.ico",
            "/favicon.svg", "/health-ui", "/health-ui/", "/health-ui/index.html", "/health-ui/health-ui.js"); // pages; their data needs the key
    /** The console's libraries (markdown, sanitizer), served from their webjars. */
    private static final List<String> CONSOLE_LIBRARIES = List.of("/webjars/marked/", "/webjars/dompurify/");

    private final ApiKeyRing ring;
    private final KeyLimits limits;
    private final KeyConcurrency concurrency;
    private final boolean metricsPublic;
    private final ObjectMapper json;
    private final MeterRegistry registry;
    private final Counter unauthorized;
    private final ConcurrentMap<String, KeyMeters> meters = new ConcurrentHashMap<>();

    @Inject
    CurrentVertxRequest currentRequest;

    /** Set by a JVM shutdown hook the moment SIGTERM arrives: new API requests get 503 while running ones drain. */
    private volatile boolean draining;

    /** The counters of one key. */
    private record KeyMeters(Counter requests, Counter promptTokens, Counter completionTokens, Counter limited) {
    }

    ApiGate(@ConfigProperty(name = "juno.api.key-file") Optional<Path> keyFile,
            @ConfigProperty(name = "juno.api.keys") Optional<String> keys,
            @ConfigProperty(name = "juno.api.rate-limit") Optional<String> rateLimit,
            @ConfigProperty(name = "juno.api.metrics-public", defaultValue = "false") boolean metricsPublic,
            @ConfigProperty(name = "juno.api.max-concurrent-per-key", defaultValue = "0") int maxConcurrentPerKey,
            @ConfigProperty(name = "quarkus.http.host", defaultValue = "127.0.0.1") String host,
            ObjectMapper json, MeterRegistry registry) {
        ApiKeys fixed = keys.map(k -> ApiKeys.parse(k, true, "JUNO_API_KEYS / --api-key")).orElse(ApiKeys.none());
        this.ring = new ApiKeyRing(fixed, keyFile.orElse(null), LOG::warn);
        this.limits = new KeyLimits(RateLimitSpec.parse(rateLimit.orElse("")));
        this.concurrency = new KeyConcurrency(maxConcurrentPerKey);
        this.metricsPublic = metricsPublic;
        this.json = json;
        this.registry = registry;
        this.unauthorized = Counter.builder("juno.api.unauthorized").description("Requests refused with 401 (no key or an unknown key)")
                .register(registry);
        if (ring.required()) {
            LOG.infof("API keys required on every route but /q/health%s: %s%s", metricsPublic ? " and /q/metrics" : "",
                    ring.keys().names(), keyFile.map(f -> " (file " + f + ", reloaded when it changes)").orElse(""));
        } else if (!BindAddress.isLoopback(host)) {
            LOG.warnf("WARNING: the API listens on %s, beyond this machine, and no API keys are set: anyone who can reach it may "
                    + "use it. Set --api-key-file FILE (or JUNO_API_KEYS), or listen on 127.0.0.1.", host);
        }
        if (limits.active()) {
            LOG.infof("rate limits per key: %s", limits.spec());
        }
        if (concurrency.active()) {
            LOG.infof("at most %d generation requests at once per key", concurrency.limit());
        }
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("juno-drain").unstarted(() -> draining = true));
    }

    void register(@Observes Filters filters) {
        filters.register(this::filter, 1000);
    }

    private void filter(RoutingContext rc) {
        String path = rc.normalizedPath();
        if (draining && path.startsWith("/v1/")) {
            rc.response().putHeader("Connection", "close");
            refuse(rc, 503, ErrorResponse.of("The server is shutting down; running requests are finishing. Please retry on another server "
                    + "or later.", "service_unavailable_error", null, "shutting_down"), 1);
            return;
        }
        if (isOpen(path)) {
            rc.next();
            return;
        }
        String name = ANONYMOUS;
        if (ring.required()) {
            String header = rc.request().getHeader(HttpHeaders.AUTHORIZATION);
            Optional<String> found = ring.authenticate(header);
            if (found.isEmpty()) {
                unauthorized.increment();
                LOG.debugf("401 %s %s: %s", rc.request().method(), path, header == null ? "no key" : "unknown key");
                refuse(rc, 401, header == null
                        ? ErrorResponse.of("You didn't provide an API key. You need to provide your API key in an Authorization header "
                        + "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "invalid_request_error", null, null)
                        : ErrorResponse.of("Incorrect API key provided. You can find your API key in the server's key file.",
                        "invalid_request_error", null, "invalid_api_key"), 0);
                return;
            }
            name = found.get();
        }
        rc.put(KEY_NAME, name);
        if (path.startsWith("/v1/")) {
            boolean generates = rc.request().method() == HttpMethod.POST
                    && (path.equals("/v1/chat/completions") || path.equals("/v1/completions") || path.startsWith("/v1/inference"));
            KeyLimits.Decision d = limits.admit(name, generates);
            KeyMeters m = meters(name);
            if (!d.allowed()) {
                m.limited().increment();
                long seconds = Math.max(1, (d.retryAfter().toMillis() + 999) / 1000);
                LOG.debugf("429 for key %s: %s", name, d.limit());
                refuse(rc, 429, ErrorResponse.of("Rate limit reached for key '" + name + "' on " + d.limit()
                        + ". Please try again in " + seconds + "s.", d.limit().startsWith("tokens") ? "tokens" : "requests", null,
                        "rate_limit_exceeded"), seconds);
                return;
            }
            if (generates && !concurrency.tryEnter(name)) {
                m.limited().increment();
                LOG.debugf("429 for key %s: %d requests running", name, concurrency.limit());
                refuse(rc, 429, ErrorResponse.of("Too many concurrent requests for key '" + name + "': at most " + concurrency.limit()
                        + " at once. Please wait for one to finish.", "requests", null, "rate_limit_exceeded"), 1);
                return;
            }
            if (generates && concurrency.active()) {
                String key = name;
                rc.addEndHandler(done -> concurrency.leave(key)); // the response ended or the connection closed
            }
            m.requests().increment();
        }
        rc.next();
    }

    private boolean isOpen(String path) {
        if (path.equals("/q/health") || path.startsWith("/q/health/")) {
            return true;
        }
        if (path.equals("/q/metrics") || path.startsWith("/q/metrics/")) {
            return metricsPublic || !ring.required();
        }
        return CONSOLE.contains(path) || CONSOLE_LIBRARIES.stream().anyMatch(path::startsWith);
    }

    private void refuse(RoutingContext rc, int status, ErrorResponse body, long retryAfterSeconds) {
        String text;
        try {
            text = json.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            text = "{\"error\":{\"message\":\"refused\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}";
        }
        var response = rc.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
        if (status == 401) {
            response.putHeader("WWW-Authenticate", "Bearer");
        }
        if (retryAfterSeconds > 0) {
            response.putHeader("Retry-After", Long.toString(retryAfterSeconds));
        }
        response.end(text);
    }

    /** The name of the current request's key ({@link #ANONYMOUS} without keys or outside a request). */
    public String currentKey() {
        try {
            RoutingContext rc = currentRequest == null ? null : currentRequest.getCurrent();
            Object name = rc == null ? null : rc.get(KEY_NAME);
            return name instanceof String s ? s : ANONYMOUS;
        } catch (RuntimeException noRequestContext) {
            return ANONYMOUS;
        }
    }

    /** Records what a finished request of {@code key} used: per-key token counters and its token bucket. */
    public void used(String key, Usage usage) {
        KeyMeters m = meters(key);
        m.promptTokens().increment(usage.promptTokens());
        m.completionTokens().increment(usage.completionTokens());
        limits.charge(key, (long) usage.promptTokens() + usage.completionTokens());
    }

    private KeyMeters meters(String key) {
        return meters.computeIfAbsent(key, k -> new KeyMeters(
                Counter.builder("juno.key.requests").description("API requests admitted, per key").tag("key", k).register(registry),
                Counter.builder("juno.key.tokens.prompt").description("Prompt tokens of finished requests, per key").tag("key", k).register(registry),
                Counter.builder("juno.key.tokens.completion").description("Completion tokens of finished requests, per key").tag("key", k)
                        .register(registry),
                Counter.builder("juno.key.rate.limited").description("Requests refused with 429 by the key's rate limit, per key").tag("key", k)
                        .register(registry)));
    }
}
