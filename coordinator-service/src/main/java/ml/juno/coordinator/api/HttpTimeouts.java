package ml.juno.coordinator.api;

import io.quarkus.runtime.Startup;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Connection time limits that never cut a long answer, a Vert.x filter in front of every route (before the API keys):
 *
 * <ul>
 *   <li><b>Body read</b> ({@code juno.http.body-timeout}, 15 s; 0: off): a request whose body has not fully arrived that
 *   long after its headers (fewer body bytes than its {@code Content-Length}) gets 408 in OpenAI's error shape and its
 *   connection is closed, instead of waiting silently. Only while nothing has been answered yet: a request whose body
 *   arrived is never touched, however long its generation takes. Chunked bodies (no length) are not timed here.</li>
 *   <li><b>Keep-alive idle</b> ({@code juno.http.keep-alive-timeout}, 60 s; 0: off): a connection with no request in
 *   flight is closed that long after its last response ended. The clock stops while any request of the connection
 *   runs, so a stream or a whole reply that takes minutes is never cut. The next request's headers must arrive within
 *   this bound too, so slow headers on a kept-alive connection are cut.</li>
 * </ul>
 *
 * A brand-new connection whose first request's headers never complete is not seen here (route filters run after the
 * headers); Vert.x's {@code quarkus.http.idle-timeout} bounds it when it sends nothing.
 */
@Startup
@ApplicationScoped
public class HttpTimeouts {

    private static final Logger LOG = Logger.getLogger(HttpTimeouts.class);
    /** Routing-context key: this request was answered 408 here. */
    private static final String ANSWERED_408 = "juno.http.answered-408";
    private static final String TIMED_OUT_BODY = "{\"error\":{\"message\":\"The request body did not arrive in time: %d of its %d bytes "
            + "(Content-Length) came within %d ms.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"request_timeout\"}}";

    private final Vertx vertx;
    private final long bodyMillis;
    private final long keepAliveMillis;
    private final Map<HttpConnection, Connection> connections = new ConcurrentHashMap<>();

    /** Requests in flight on one connection, and its idle timer (-1: none). */
    private static final class Connection {
        int inFlight;
        long idleTimer = -1;
    }

    HttpTimeouts(Vertx vertx,
                 @ConfigProperty(name = "juno.http.body-timeout", defaultValue = "15s") Duration body,
                 @ConfigProperty(name = "juno.http.keep-alive-timeout", defaultValue = "60s") Duration keepAlive) {
        if (body.isNegative() || keepAlive.isNegative()) {
            throw new IllegalArgumentException("juno.http.body-timeout and juno.http.keep-alive-timeout must be >= 0 (0: off)");
        }
        this.vertx = vertx;
        this.bodyMillis = body.toMillis();
        this.keepAliveMillis = keepAlive.toMillis();
    }

    /** Connections being watched (a request in flight or an idle timer running). */
    int watched() {
        return connections.size();
    }

    void register(@Observes Filters filters) {
        filters.register(this::filter, 2000); // before ApiGate (1000): a refused request is timed as well
    }

    /**
     * A request answered 408 here still has its handler (RESTEasy, waiting for the body) running: when the connection
     * closes it fails to read the body and tries to answer too, which fails with "Response has already been written"
     * and would reach Quarkus's error handler, logged as an ERROR with a stack trace. The 408 was the answer: that late
     * failure is a DEBUG line here, ahead of every other failure handler.
     */
    void failures(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).failureHandler(this::lateFailure);
    }

    private void lateFailure(RoutingContext rc) {
        if (rc.get(ANSWERED_408) == null) {
            rc.next();
            return;
        }
        LOG.debugf("%s %s failed after its 408 (%s); the 408 stands", rc.request().method(), rc.normalizedPath(),
                rc.failure() == null ? "status " + rc.statusCode() : rc.failure().toString());
    }

    private void filter(RoutingContext rc) {
        HttpServerRequest request = rc.request();
        HttpConnection conn = request.connection();
        if (conn != null && keepAliveMillis > 0) {
            Connection c = connections.computeIfAbsent(conn, k -> new Connection());
            synchronized (c) {
                c.inFlight++;
                if (c.idleTimer >= 0) {
                    vertx.cancelTimer(c.idleTimer);
                    c.idleTimer = -1;
                }
            }
            rc.addEndHandler(done -> ended(conn, c));
        }
        long length = contentLength(request);
        if (bodyMillis > 0 && length > 0) {
            long timer = vertx.setTimer(bodyMillis, id -> bodyTimedOut(rc, conn, length));
            rc.addEndHandler(done -> vertx.cancelTimer(timer));
        }
        rc.next();
    }

    private void ended(HttpConnection conn, Connection c) {
        synchronized (c) {
            if (--c.inFlight > 0) {
                return;
            }
            c.idleTimer = vertx.setTimer(keepAliveMillis, id -> {
                synchronized (c) {
                    if (c.inFlight > 0 || c.idleTimer != id) {
                        return; // a request came after all
                    }
                    c.idleTimer = -1;
                }
                connections.remove(conn, c);
                LOG.debugf("closing a keep-alive connection idle for %d ms", keepAliveMillis);
                conn.close();
            });
        }
    }

    private void bodyTimedOut(RoutingContext rc, HttpConnection conn, long length) {
        long got = rc.request().bytesRead();
        if (got >= length || rc.response().headWritten() || rc.response().ended() || rc.response().closed()) {
            return; // the body arrived (or an answer is already on its way): nothing to cut
        }
        LOG.infof("408 %s %s: %d of %d body bytes in %d ms; closing the connection", rc.request().method(), rc.normalizedPath(),
                got, length, bodyMillis);
        rc.put(ANSWERED_408, Boolean.TRUE);
        rc.response().setStatusCode(408)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .putHeader(HttpHeaders.CONNECTION, "close")
                .end(TIMED_OUT_BODY.formatted(got, length, bodyMillis))
                .onComplete(done -> {
                    if (conn != null) {
                        conn.close();
                    }
                });
    }

    private static long contentLength(HttpServerRequest request) {
        String v = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (v == null) {
            return -1;
        }
        try {
            return Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            return -1; // Vert.x refuses it itself
        }
    }
}
