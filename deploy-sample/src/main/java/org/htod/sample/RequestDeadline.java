package org.htod.sample;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The time a connection has to send a request whole, from its first byte: past it the request is
 * answered 408 and the connection closed (by {@link InOrderAnswers#timedOut}, after the answers
 * owed before it). A client sending a byte every few seconds kept its connection, and its buffers,
 * for as long as it liked: the idle time starts again at every read. The decoder ({@link
 * ServerCodec}) says where a request begins and ends, so that a request whose first bytes come in
 * the same read as the end of the one before has its clock from then. The clock stops while the
 * server itself is not reading ({@link #pause}), and starts again, in full, when it reads again.
 * In the pipeline for its context: its executor runs the clock, and a closed connection stops it.
 */
final class RequestDeadline extends ChannelInboundHandlerAdapter {
    private final Duration time;
    private InOrderAnswers requests;
    private ChannelHandlerContext ctx;
    private ScheduledFuture<?> timer;
    /** A request's first byte has come and its end has not been decoded. */
    private boolean begun;
    /** The server does not read: see {@link #pause}. */
    private boolean paused;

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

    /** A request's first byte has come: its clock starts, unless the server is not reading. */
    void begin() {
        begun = true;
        if (!paused) {
            start();
        }
    }

    /** The request is received whole. */
    void end() {
        begun = false;
        stop();
    }

    /** The server stops reading: the time it takes is not the client's. */
    void pause() {
        paused = true;
        stop();
    }

    /** The server reads again: a request begun has its time again. */
    void resume() {
        paused = false;
        if (begun) {
            start();
        }
    }

    private void start() {
        if (timer == null && ctx != null && ctx.channel().isActive()) {
            timer = ctx.executor().schedule(() -> {
                timer = null;
                requests.timedOut();
            }, time.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    private void stop() {
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
