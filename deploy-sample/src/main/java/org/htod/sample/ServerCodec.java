package org.htod.sample;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Netty's {@code HttpServerCodec} that tells the {@link RequestDeadline} where each request begins
 * and ends in the bytes. The deadline, which sees only the reads, started a request's clock at the
 * first read after the end of the one before; a request whose first bytes came in the same read as
 * that end had no clock until its next byte, and none at all if the client sent no more. Only the
 * decoder knows where a request ends: its first byte is the first that the decoder is given after
 * that end, past the empty lines it skips.
 *
 * <p>As {@code HttpServerCodec} does, the encoder writes no content in an answer to a HEAD: the
 * methods of the requests decoded are queued for the answers, which come in the same order
 * ({@link InOrderAnswers}). An interim answer (100 Continue) takes none of them.
 */
final class ServerCodec extends CombinedChannelDuplexHandler<ServerCodec.Decoder, ServerCodec.Encoder> {
    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>();

    ServerCodec(RequestDeadline deadline) {
        init(new Decoder(deadline), new Encoder());
    }

    /** The request decoder, with the default limits, telling the deadline where requests begin and end. */
    final class Decoder extends HttpRequestDecoder {
        private final RequestDeadline deadline;
        /** A request's first byte was given, and its last part not decoded yet. */
        private boolean inRequest;

        Decoder(RequestDeadline deadline) {
            this.deadline = deadline;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            if (!inRequest && buffer.forEachByte(ServerCodec::skipped) >= 0) {
                inRequest = true;
                deadline.begin();
            }
            int from = out.size();
            super.decode(ctx, buffer, out);
            for (int i = from; i < out.size(); i++) {
                Object m = out.get(i);
                if (m instanceof HttpRequest r) {
                    methods.add(r.method());
                }
                if (m instanceof LastHttpContent) {
                    inRequest = false;
                    deadline.end();
                }
            }
        }
    }

    /** The response encoder: no content in an answer to a HEAD. */
    final class Encoder extends HttpResponseEncoder {
        @Override
        protected boolean isContentAlwaysEmpty(HttpResponse msg) {
            if (msg.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                return super.isContentAlwaysEmpty(msg); // not the final answer: the request's method stays queued
            }
            return HttpMethod.HEAD.equals(methods.poll()) || super.isContentAlwaysEmpty(msg);
        }
    }

    /** Whether the decoder skips {@code b} before a request line: as Netty's HttpObjectDecoder does. */
    private static boolean skipped(byte b) {
        int c = b & 0xff;
        return Character.isISOControl(c) || Character.isWhitespace(c);
    }
}
