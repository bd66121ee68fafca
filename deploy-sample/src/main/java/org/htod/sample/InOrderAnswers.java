package org.htod.sample;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * One connection's requests handled one at a time, so that they are answered in the order they
 * came, as HTTP/1.1 requires of pipelined requests (RFC 9112 §9.3.2). Sits after the decoder: a
 * request's parts are passed on as they come; what comes after a request passed on whole is held
 * here, and reading stops, until that request's answer is written. Without it a GET pipelined after
 * a PUT was answered first, while the PUT waited for its durability.
 */
final class InOrderAnswers extends ChannelDuplexHandler {
    /** Held in place of the request that was not received whole in time: answered 408, then the connection closed. */
    private static final Object TIMED_OUT = new Object();

    private final RequestDeadline deadline;
    private final ServerMetrics metrics;
    private ChannelHandlerContext ctx;
    /** Request parts read after the one being handled, in order. */
    private final ArrayDeque<Object> held = new ArrayDeque<>();
    /** A request was passed on and its final answer is not written yet. */
    private boolean handling;
    /** The request being handled still has parts to come, passed on as they come. */
    private boolean receiving;
    /** A final answer has begun and its last part is not written yet. */
    private boolean answering;
    /** A request was not received whole in time: what comes after it is dropped. */
    private boolean timedOut;

    InOrderAnswers(RequestDeadline deadline, ServerMetrics metrics) {
        this.deadline = deadline;
        this.metrics = metrics;
        deadline.tell(this);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (timedOut) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (!held.isEmpty() || (handling && !receiving)) {
            held.add(msg);
            stopReading();
        } else {
            pass(ctx, msg);
        }
    }

    private void pass(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest) {
            handling = true;
            receiving = true;
        }
        if (msg instanceof LastHttpContent) {
            receiving = false;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse r && r.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
            answering = true;
        }
        boolean answered = answering && msg instanceof LastHttpContent;
        ctx.write(msg, promise);
        if (answered) {
            answering = false;
            handling = false;
            receiving = false;
            // Not from within this write: what is released may write an answer at once.
            ctx.executor().execute(() -> release(ctx));
        }
    }

    /** Passes on what is held until a request is passed on whole; reads again once nothing is held. */
    private void release(ChannelHandlerContext ctx) {
        while (!held.isEmpty() && !(handling && !receiving)) {
            Object next = held.poll();
            if (next == TIMED_OUT) {
                answerTimedOut();
                return;
            }
            pass(ctx, next);
        }
        if (held.isEmpty() && ctx.channel().isActive() && !timedOut) {
            ctx.channel().config().setAutoRead(true);
            // A request begun has its time again: the rest of the one passed on, or the first
            // bytes of the next, decoded while reading was stopped and whose clock stood.
            deadline.resume();
        }
    }

    /** Stops reading, and so the request deadline's clock: the time the server takes is not the client's. */
    private void stopReading() {
        ctx.channel().config().setAutoRead(false);
        deadline.pause();
    }

    /**
     * The request being received was not received whole within the deadline: answered 408 and the
     * connection closed, after the answers owed to the requests before it.
     */
    void timedOut() {
        if (timedOut || !ctx.channel().isActive()) {
            return;
        }
        timedOut = true;
        ctx.channel().config().setAutoRead(false);
        if (!held.isEmpty() || (handling && !receiving)) {
            held.add(TIMED_OUT);
        } else {
            answerTimedOut();
        }
    }

    private void answerTimedOut() {
        metrics.refused(408).increment();
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.REQUEST_TIMEOUT,
                Unpooled.copiedBuffer("408 the request was not received whole within " + deadline.time().toMillis()
                        + " ms\n", StandardCharsets.UTF_8));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        HttpUtil.setContentLength(r, r.content().readableBytes());
        // What the client still sends is read and dropped, and the connection half closed after
        // the answer, then closed: closed with bytes unread, it would be reset, and the client
        // could lose the answer.
        ctx.channel().config().setAutoRead(true);
        ctx.writeAndFlush(r).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess() && f.channel() instanceof SocketChannel c) {
                c.shutdownOutput();
                ctx.executor().schedule(() -> {
                    ctx.close();
                }, 1, TimeUnit.SECONDS);
            } else {
                ctx.close();
            }
        });
    }

    /**
     * Whether a request received whole waits for its answer, being handled or held here: its
     * connection sends nothing meanwhile, and reads nothing while one is held, but is not idle.
     */
    boolean awaitingAnswer() {
        return (handling && !receiving) || !held.isEmpty();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        while (!held.isEmpty()) {
            Object m = held.poll();
            if (m != TIMED_OUT) {
                ReferenceCountUtil.release(m);
            }
        }
    }
}
