package org.htod.sample;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The time a connection has to send a request whole, from its first byte: past it the request is
 * answered 408 and the connection closed (by {@link InOrderAnswers#timedOut}, after the answers
 * owed before it). Sits before the decoder, which says when a request is whole. A client sending a
 * byte every few seconds kept its connection, and its buffers, for as long as it liked: the idle
 * time starts again at every read. The clock stops while the server itself is not reading.
 */
final class RequestDeadline extends ChannelInboundHandlerAdapter {
    private final Duration time;
    private InOrderAnswers requests;
    private ChannelHandlerContext ctx;
    private ScheduledFuture<?> timer;

    RequestDeadline(Duration time) {
        this.time = time;
    }

    /** The handler told when the time is up. */
    void tell(InOrderAnswers requests) {
        this.requests = requests;
    }

    Duration time() {
        return time;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b && b.isReadable()) {
            start();
        }
        ctx.fireChannelRead(msg);
    }

    /** Starts the clock, unless it runs already: a request has begun. */
    void start() {
        if (timer == null && ctx != null && ctx.channel().isActive()) {
            timer = ctx.executor().schedule(() -> {
                timer = null;
                requests.timedOut();
            }, time.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** Stops the clock: the request is whole, or the server stopped reading. */
    void stop() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stop();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }
}
