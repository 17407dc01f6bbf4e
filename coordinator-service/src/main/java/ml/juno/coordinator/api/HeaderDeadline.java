package ml.juno.coordinator.api;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The bound on a new connection's first request headers: a Netty handler put first in every accepted connection's
 * pipeline (by {@link Acceptor}, itself first in the listening channel's pipeline), that closes the connection a fixed
 * time after it was accepted unless {@link #disarm} took it out first, which {@link HttpTimeouts}'s route filter does as
 * soon as the first request's headers are complete. It only watches the clock: every byte passes through untouched, so
 * its place ahead of TLS or the HTTP codec changes nothing. Vert.x has no hook of its own for this (its idle timeout
 * restarts at every byte, so one header byte a few seconds apart held a connection for hours); with it a client that
 * connects and sends nothing, or trickles its headers, holds the connection at most this long.
 */
final class HeaderDeadline extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = Logger.getLogger(HeaderDeadline.class);
    static final String NAME = "juno-header-deadline";

    private final long millis;
    private ScheduledFuture<?> timer;

    HeaderDeadline(long millis) {
        this.millis = millis;
    }

    /** Takes the deadline off {@code pipeline}'s connection, if it is still on (the first request's headers came). */
    static void disarm(ChannelPipeline pipeline) {
        if (pipeline.get(NAME) != null) {
            try {
                pipeline.remove(NAME);
            } catch (NoSuchElementException raced) {
                // removed meanwhile: the same outcome
            }
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            start(ctx); // an accepted connection is active once registered
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        start(ctx);
        ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
        if (timer == null) {
            timer = ctx.executor().schedule(() -> expire(ctx), millis, TimeUnit.MILLISECONDS);
        }
    }

    private void expire(ChannelHandlerContext ctx) {
        if (!ctx.isRemoved()) {
            LOG.debugf("closing %s: no complete request headers %d ms after it connected", ctx.channel().remoteAddress(), millis);
            ctx.channel().close();
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
        }
    }

    /** In the listening channel's pipeline: hands each accepted connection its own deadline. */
    @ChannelHandler.Sharable
    static final class Acceptor extends ChannelInboundHandlerAdapter {
        static final String NAME = "juno-header-deadline-acceptor";
        private final long millis;

        Acceptor(long millis) {
            this.millis = millis;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Channel child) {
                child.pipeline().addFirst(HeaderDeadline.NAME, new HeaderDeadline(millis));
            }
            ctx.fireChannelRead(msg);
        }
    }
}
