package org.htod.sample;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * One connection's requests handled one at a time, so that they are answered in the order they
 * came, as HTTP/1.1 requires of pipelined requests (RFC 9112 §9.3.2). Sits after the decoder: a
 * request's parts are passed on as they come; what comes after a request passed on whole is held
 * here, and reading stops, until that request's answer is written. Without it a GET pipelined after
 * a PUT was answered first, while the PUT waited for its durability.
 */
final class InOrderAnswers extends ChannelDuplexHandler {
    /** Request parts read after the one being handled, in order. */
    private final ArrayDeque<Object> held = new ArrayDeque<>();
    /** A request was passed on and its final answer is not written yet. */
    private boolean handling;
    /** The request being handled still has parts to come, passed on as they come. */
    private boolean receiving;
    /** A final answer has begun and its last part is not written yet. */
    private boolean answering;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!held.isEmpty() || (handling && !receiving)) {
            held.add(msg);
            ctx.channel().config().setAutoRead(false);
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
            pass(ctx, held.poll());
        }
        if (held.isEmpty() && ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
        }
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
            ReferenceCountUtil.release(held.poll());
        }
    }
}
