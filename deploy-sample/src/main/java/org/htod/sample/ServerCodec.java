package org.htod.sample;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
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
 *
 * <p>An answer to a request whose method was never read (a 408 for a request whose head did not
 * arrive whole, a 400 for a request line the decoder could not read) carries no content either,
 * and says {@code Content-Length: 0}: the request may have been a HEAD, whose answer has none (RFC
 * 9110 §9.3.2), and its client read the line that followed as the start of the next answer.
 */
final class ServerCodec extends CombinedChannelDuplexHandler<ServerCodec.Decoder, ServerCodec.Encoder> {
    /** Queued for a request whose request line the decoder could not read; compared by identity. */
    private static final HttpMethod UNREAD = new HttpMethod("UNREAD");

    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>();

    ServerCodec(RequestDeadline deadline) {
        init(new Decoder(deadline), new Encoder());
    }

    /** The request decoder, with the default limits, telling the deadline where requests begin and end. */
    final class Decoder extends HttpRequestDecoder {
        private final RequestDeadline deadline;
        /** A request's first byte was given, and its last part not decoded yet. */
        private boolean inRequest;
        /** The request the decoder gives next is one it made up in place of a request line it could not read. */
        private boolean unreadable;

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
                    methods.add(unreadable ? UNREAD : r.method());
                    unreadable = false;
                }
                if (m instanceof LastHttpContent) {
                    inRequest = false;
                    deadline.end();
                }
            }
        }

        /**
         * Netty's stand-in for a request whose request line it could not read (its method GET, which
         * the client may not have sent): marked, so that its answer is not taken for a GET's.
         */
        @Override
        protected HttpMessage createInvalidMessage() {
            unreadable = true;
            return super.createInvalidMessage();
        }
    }

    /** The response encoder: no content in an answer to a HEAD, nor to a request whose method is not known. */
    final class Encoder extends HttpResponseEncoder {
        /** The answer being encoded would carry content, and its request's method is not known. */
        private boolean unknown;

        @Override
        protected boolean isContentAlwaysEmpty(HttpResponse msg) {
            unknown = false;
            if (msg.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                return super.isContentAlwaysEmpty(msg); // not the final answer: the request's method stays queued
            }
            HttpMethod m = methods.poll(); // none: the request's head never arrived whole
            if (HttpMethod.HEAD.equals(m) || super.isContentAlwaysEmpty(msg)) {
                return true;
            }
            unknown = m == null || m == UNREAD;
            return unknown;
        }

        /** Called after {@link #isContentAlwaysEmpty}, before the headers are written. */
        @Override
        protected void sanitizeHeadersBeforeEncode(HttpResponse msg, boolean isAlwaysEmpty) {
            super.sanitizeHeadersBeforeEncode(msg, isAlwaysEmpty);
            if (unknown) {
                // No content follows: a Content-Length of the content left out would keep a client
                // that sent a GET waiting for it until the close, and then report it cut short.
                msg.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0).remove(HttpHeaderNames.TRANSFER_ENCODING);
            }
        }
    }

    /** Whether the decoder skips {@code b} before a request line: as Netty's HttpObjectDecoder does. */
    private static boolean skipped(byte b) {
        int c = b & 0xff;
        return Character.isISOControl(c) || Character.isWhitespace(c);
    }
}
