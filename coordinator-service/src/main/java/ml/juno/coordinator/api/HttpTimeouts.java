package ml.juno.coordinator.api;

import io.netty.channel.Channel;
import io.quarkus.runtime.Startup;
import io.quarkus.vertx.http.HttpServerStart;
import io.quarkus.vertx.http.HttpsServerStart;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.impl.HttpServerImpl;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.core.net.impl.TCPServerBase;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.ObservesAsync;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Connection time limits that never cut a long answer, a Vert.x filter in front of every route (before the API keys):
 *
 * <ul>
 *   <li><b>First headers</b> ({@code juno.http.header-timeout}, 20 s; 0: off): a new connection whose first request's
 *   headers are not complete that long after it connected is closed ({@link HeaderDeadline}, a Netty handler given to
 *   every accepted connection), so a client that connects and sends nothing, or trickles its headers a byte at a time,
 *   holds a connection no longer than that.</li>
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
 * Vert.x offers no public hook at connection time (Quarkus keeps {@code HttpServer.connectionHandler} for itself), so the
 * first-headers bound reaches the listening Netty channel through Vert.x's internals ({@link #guard}); if that ever
 * fails it says so once at start and guards from the first request on instead.
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
    private final long headerMillis;
    private final HeaderDeadline.Acceptor acceptor;
    /** Set when the listening channel could not be reached at start: the route filter guards it instead. */
    private final java.util.concurrent.atomic.AtomicBoolean guardLate = new java.util.concurrent.atomic.AtomicBoolean();
    private final Map<HttpConnection, Connection> connections = new ConcurrentHashMap<>();

    /** Requests in flight on one connection, and its idle timer (-1: none). */
    private static final class Connection {
        int inFlight;
        long idleTimer = -1;
    }

    HttpTimeouts(Vertx vertx,
                 @ConfigProperty(name = "juno.http.body-timeout", defaultValue = "15s") Duration body,
                 @ConfigProperty(name = "juno.http.keep-alive-timeout", defaultValue = "60s") Duration keepAlive,
                 @ConfigProperty(name = "juno.http.header-timeout", defaultValue = "20s") Duration header) {
        if (body.isNegative() || keepAlive.isNegative() || header.isNegative()) {
            throw new IllegalArgumentException(
                    "juno.http.body-timeout, juno.http.keep-alive-timeout and juno.http.header-timeout must be >= 0 (0: off)");
        }
        this.vertx = vertx;
        this.bodyMillis = body.toMillis();
        this.keepAliveMillis = keepAlive.toMillis();
        this.headerMillis = header.toMillis();
        this.acceptor = new HeaderDeadline.Acceptor(headerMillis);
    }

    /**
     * The HTTP server listens (an asynchronous event, once per server verticle): every connection it accepts from now
     * on gets its first-headers deadline.
     */
    void started(@ObservesAsync HttpServerStart start) {
        guardListening();
    }

    void started(@ObservesAsync HttpsServerStart start) {
        guardListening();
    }

    private void guardListening() {
        if (headerMillis == 0) {
            return;
        }
        try {
            Field bound = TCPServerBase.class.getDeclaredField("bindFuture");
            bound.setAccessible(true);
            int guarded = 0;
            for (HttpServerImpl server : ((VertxInternal) vertx).sharedHttpServers().values()) {
                if (bound.get(server) instanceof io.vertx.core.Future<?> f && f.result() instanceof Channel listening) {
                    guard(listening);
                    guarded++;
                }
            }
            if (guarded == 0) {
                throw new IllegalStateException("no listening channel found");
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            if (guardLate.getAndSet(true)) {
                return; // said once
            }
            LOG.warnf("juno.http.header-timeout: cannot reach Vert.x's listening channel at start (%s); connections are "
                    + "guarded from the first request on", e);
        }
    }

    /** Puts the deadline-giving acceptor first in {@code listening}'s pipeline, once. */
    private void guard(Channel listening) {
        synchronized (acceptor) {
            if (listening.pipeline().get(HeaderDeadline.Acceptor.NAME) == null) {
                listening.pipeline().addFirst(HeaderDeadline.Acceptor.NAME, acceptor);
            }
        }
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
        if (headerMillis > 0 && conn instanceof ConnectionBase base) {
            HeaderDeadline.disarm(base.channelHandlerContext().pipeline()); // its first headers came
            Channel listening = guardLate.get() ? base.channel().parent() : null;
            if (listening != null && listening.pipeline().get(HeaderDeadline.Acceptor.NAME) == null) {
                guard(listening);
            }
        }
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
