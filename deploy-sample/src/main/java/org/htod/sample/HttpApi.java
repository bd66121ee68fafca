package org.htod.sample;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.zip.CRC32C;
import org.htod.EntryTooLargeException;
import org.htod.core.HtodException;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;
import org.htod.fragment.MalformedIncludeException;
import org.htod.fragment.PublishResult;
import org.htod.odg.CycleException;

/**
 * The HTTP endpoints. Runs on an executor group of its own, not on Netty's I/O threads, because
 * page reads are disk reads. Every error is answered with a status and a one-line message: 4xx for
 * what the request got wrong, 503 while shutting down, 500 (logged in one line) for the store's
 * own failures; never a stack trace.
 */
@ChannelHandler.Sharable
final class HttpApi extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FRAGMENTS = "/fragments";
    private static final String PAGES = "/pages";
    private static final String GRAPH = "/graph";

    private final PublishingServer server;
    private final FragmentCache cache;
    private final ServerMetrics metrics;
    /** SHA-256 of the admin token, or null: the admin endpoints are off. */
    private final byte[] adminToken;

    HttpApi(PublishingServer server) {
        this.server = server;
        this.cache = server.cache();
        this.metrics = server.metrics();
        this.adminToken = server.adminToken() == null ? null : sha256(server.adminToken());
    }

    /** A request refused with {@code status} and a one-line reason. */
    static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        /** Never serialized: a refusal lives within one request's handling. */
        final transient HttpResponseStatus status;
        /** The methods the path accepts, for the Allow header of a 405; null for other refusals. */
        final String allow;

        Refusal(HttpResponseStatus status, String message) {
            this(status, message, null);
        }

        Refusal(HttpResponseStatus status, String message, String allow) {
            super(message, null, false, false);
            this.status = status;
            this.allow = allow;
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        // Not kept alive after a request the decoder could not read: it discards every byte that
        // comes after on the connection, so the client's next request waited for ever.
        boolean keepAlive = req.decoderResult().isSuccess() && HttpUtil.isKeepAlive(req);
        try {
            if (!req.decoderResult().isSuccess()) {
                throw new Refusal(HttpResponseStatus.BAD_REQUEST, "malformed HTTP request");
            }
            route(ctx, req, keepAlive);
        } catch (Refusal r) {
            refuse(ctx, keepAlive, r.status, r.getMessage(), r.allow);
        } catch (RuntimeException e) {
            fail(ctx, keepAlive, e);
        }
    }

    /** The query's parameters; a query that cannot be decoded (a bad escape) is the request's error. */
    private static java.util.Map<String, java.util.List<String>> parameters(QueryStringDecoder q) {
        try {
            return q.parameters();
        } catch (IllegalArgumentException e) {
            throw new Refusal(HttpResponseStatus.BAD_REQUEST, "malformed query string: " + e.getMessage());
        }
    }

    /**
     * The request target in origin form: a target in absolute form ({@code http://host:port/pages/x.html}),
     * which a server must accept (RFC 9112 §3.2.2), is served by its path and query; it was a 404.
     */
    static String originForm(String uri) {
        int colon = uri.indexOf("://");
        if (uri.startsWith("/") || colon <= 0) {
            return uri;
        }
        String scheme = uri.substring(0, colon);
        if (!scheme.equalsIgnoreCase("http") && !scheme.equalsIgnoreCase("https")) {
            return uri;
        }
        int start = colon + 3;
        int end = start;
        while (end < uri.length() && "/?#".indexOf(uri.charAt(end)) < 0) {
            end++;
        }
        String rest = uri.substring(end);
        return rest.startsWith("/") ? rest : "/" + rest;
    }

    private void route(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive) {
        QueryStringDecoder q = new QueryStringDecoder(originForm(req.uri()));
        String path = q.rawPath();
        // HEAD is answered as GET: the same status and headers, Content-Length the GET's; the
        // ServerCodec writes no content in an answer to a HEAD.
        HttpMethod m = req.method().equals(HttpMethod.HEAD) ? HttpMethod.GET : req.method();
        if (path.equals("/")) {
            only(req, READ);
            send(ctx, keepAlive, ok("text/html; charset=utf-8", StatusPage.render(server.stats())));
        } else if (path.equals("/stats")) {
            only(req, READ);
            send(ctx, keepAlive, ok("application/json", json(server.stats())));
        } else if (path.startsWith("/admin/") && !admin(req)) {
            throw new Refusal(HttpResponseStatus.UNAUTHORIZED, "an admin request carries Authorization: Bearer and the"
                    + " server's admin token");
        } else if (path.equals("/admin/compact")) {
            only(req, "POST");
            send(ctx, keepAlive, json(HttpResponseStatus.OK, compact()));
        } else if (path.equals("/metrics")) {
            only(req, READ);
            send(ctx, keepAlive, ok("text/plain; version=0.0.4; charset=utf-8", metrics.registry.scrape()));
        } else if (path.startsWith(PAGES + "/")) {
            only(req, READ);
            page(ctx, req, keepAlive, target(path, PAGES));
        } else if (path.startsWith(GRAPH + "/")) {
            only(req, READ);
            graph(ctx, keepAlive, target(path, GRAPH));
        } else if (path.startsWith(FRAGMENTS + "/")) {
            only(req, READ + ", PUT, DELETE");
            String p = target(path, FRAGMENTS);
            if (m.equals(HttpMethod.PUT)) {
                publish(ctx, req, keepAlive, p, parameters(q));
            } else if (m.equals(HttpMethod.DELETE)) {
                if (cache.source(p) == null) {
                    throw new Refusal(HttpResponseStatus.NOT_FOUND, "no fragment " + p);
                }
                answerWhenDurable(ctx, keepAlive, p, Change.unpublish(p), HttpResponseStatus.OK);
            } else {
                String src = cache.source(p);
                if (src == null) {
                    throw new Refusal(HttpResponseStatus.NOT_FOUND, "no fragment " + p);
                }
                send(ctx, keepAlive, ok("text/plain; charset=utf-8", src));
            }
        } else {
            throw new Refusal(HttpResponseStatus.NOT_FOUND, "no such endpoint: " + path
                    + " (try /, /pages/..., /fragments/..., /graph/..., /stats, /metrics, POST /admin/compact)");
        }
    }

    /**
     * Whether {@code req} carries the admin token: {@code Authorization: Bearer <token>}, compared
     * in constant time (their digests). Every client that could reach the server could compact its
     * store; without a token configured the admin endpoints are off (403).
     */
    private boolean admin(FullHttpRequest req) {
        if (adminToken == null) {
            throw new Refusal(HttpResponseStatus.FORBIDDEN, "the admin endpoints are off: the server was started"
                    + " without an admin token (--admin-token-file)");
        }
        String h = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (h == null || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        return MessageDigest.isEqual(adminToken, sha256(h.substring(7).strip()));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** The methods of a path that is read only: HEAD wherever GET. */
    private static final String READ = "GET, HEAD";

    /** Refuses the request with 405 and {@code allow} as its Allow header unless its method is listed there. */
    private static void only(FullHttpRequest req, String allow) {
        String m = req.method().name();
        for (String a : allow.split(", ")) {
            if (a.equals(m)) {
                return;
            }
        }
        throw new Refusal(HttpResponseStatus.METHOD_NOT_ALLOWED, m + " is not allowed here: " + allow + " only", allow);
    }

    /** The fragment path after an endpoint's prefix, checked. */
    private static String target(String rawPath, String prefix) {
        String p = rawPath.substring(prefix.length());
        String why = FragmentCache.pathProblem(p);
        if (why != null) {
            throw new Refusal(HttpResponseStatus.BAD_REQUEST, why);
        }
        return p;
    }

    private void page(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive, String p) {
        Timer.Sample t = Timer.start(metrics.registry);
        PageExpiries.Read read = server.expiries().read(p);
        if (read == null) {
            throw new Refusal(HttpResponseStatus.NOT_FOUND, "no page " + p);
        }
        byte[] body = read.text().getBytes(StandardCharsets.UTF_8);
        CRC32C crc = new CRC32C();
        crc.update(body);
        String etag = "\"" + Long.toHexString(crc.getValue()) + "-" + Integer.toHexString(body.length) + "\"";
        long maxAge = server.maxAge().toSeconds();
        // Not past the earliest expiry under the page: the page changes when that fragment
        // expires (the sweep rebuilds it without it).
        Instant exp = read.earliest();
        if (exp != null) {
            maxAge = Math.max(0, Math.min(maxAge, Duration.between(server.clock().instant(), exp).toSeconds()));
        }
        FullHttpResponse r;
        if (matches(req.headers().get(HttpHeaderNames.IF_NONE_MATCH), etag)) {
            r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_MODIFIED);
            metrics.notModified.increment();
        } else {
            r = ok("text/html; charset=utf-8", body);
        }
        r.headers().set(HttpHeaderNames.ETAG, etag).set(HttpHeaderNames.CACHE_CONTROL, "public, max-age=" + maxAge);
        send(ctx, keepAlive, r);
        metrics.pageReads.increment();
        t.stop(metrics.readLatency);
    }

    private static boolean matches(String ifNoneMatch, String etag) {
        if (ifNoneMatch == null) {
            return false;
        }
        for (String tag : ifNoneMatch.split(",")) {
            String s = tag.trim();
            if (s.equals("*") || s.equals(etag) || s.equals("W/" + etag)) {
                return true;
            }
        }
        return false;
    }

    private void graph(ChannelHandlerContext ctx, boolean keepAlive, String p) {
        if (!cache.graph().contains(p)) {
            throw new Refusal(HttpResponseStatus.NOT_FOUND, "no node " + p + " in the dependency graph");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", p);
        out.put("published", cache.source(p) != null);
        out.put("uses", cache.graph().dependencies(p));
        out.put("usedBy", cache.graph().dependents(p));
        List<String> affected = cache.graph().affected(List.of(p));
        out.put("affected", affected.size() > 1000 ? affected.subList(0, 1000) : affected);
        out.put("affectedCount", affected.size());
        send(ctx, keepAlive, ok("application/json", json(out)));
    }

    private void publish(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive, String p,
            Map<String, List<String>> params) {
        String source = utf8(req.content());
        Duration ttl = null;
        List<String> t = params.get("ttl");
        if (t != null) {
            try {
                ttl = Duration.ofSeconds(Long.parseLong(t.get(0)));
            } catch (NumberFormatException e) {
                throw new Refusal(HttpResponseStatus.BAD_REQUEST, "ttl is a number of seconds, found '" + t.get(0) + "'");
            }
            if (ttl.isNegative() || ttl.isZero()) {
                throw new Refusal(HttpResponseStatus.BAD_REQUEST, "ttl must be positive, found " + t.get(0));
            }
        }
        try {
            FragmentCache.includes(source); // a malformed include is answered here, before queueing
        } catch (MalformedIncludeException e) {
            throw new Refusal(HttpResponseStatus.BAD_REQUEST, e.getMessage());
        }
        Change c = ttl == null ? Change.publish(p, source) : Change.publish(p, source, ttl);
        answerWhenDurable(ctx, keepAlive, p, c, HttpResponseStatus.OK);
    }

    private static String utf8(ByteBuf content) {
        ByteBuffer b = content.nioBuffer();
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(b).toString();
        } catch (CharacterCodingException e) {
            throw new Refusal(HttpResponseStatus.BAD_REQUEST, "the body is not UTF-8 text");
        }
    }

    /** Submits {@code c} to the publisher and answers once it is durable, or with why it was refused. */
    private void answerWhenDurable(ChannelHandlerContext ctx, boolean keepAlive, String p, Change c,
            HttpResponseStatus status) {
        Timer.Sample t = Timer.start(metrics.registry);
        server.publisher().submit(c).whenComplete((PublishResult r, Throwable e) -> {
            if (e == null) {
                t.stop(metrics.publishLatency);
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("path", p);
                out.put(c.isUnpublish() ? "unpublished" : "published", true);
                out.put("durable", true);
                out.put("rebuilt", r.rebuilt().size());
                out.put("reconstructed", r.reconstructed());
                out.put("unitChanges", r.changed().size());
                ctx.executor().execute(() -> send(ctx, keepAlive, json(status, out)));
                return;
            }
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            ctx.executor().execute(() -> {
                if (cause instanceof CycleException ce) {
                    refuse(ctx, keepAlive, HttpResponseStatus.CONFLICT, "include cycle: " + String.join(" includes ", ce.cycle()));
                } else if (cause instanceof EntryTooLargeException) {
                    refuse(ctx, keepAlive, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "the publish, with every page it"
                            + " rebuilds, is larger than one atomic unit of the store holds: " + cause.getMessage());
                } else if (cause instanceof MalformedIncludeException || cause instanceof IllegalArgumentException) {
                    refuse(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST, cause.getMessage());
                } else if (cause instanceof IllegalStateException) {
                    refuse(ctx, keepAlive, HttpResponseStatus.SERVICE_UNAVAILABLE, cause.getMessage());
                } else {
                    fail(ctx, keepAlive, cause);
                }
            });
        });
    }

    /**
     * Compacts the store online: pages are served and fragments published while it runs, on
     * other threads; this handler's thread (one of the application executors, not an I/O
     * thread) waits for it. The answer: the sizes before and after, and what was carried over.
     */
    private Map<String, Object> compact() {
        org.htod.CopyReport r = server.store().compact(org.htod.Progress.NONE);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("file", r.target().toString());
        out.put("maps", r.maps());
        out.put("entries", r.entries());
        out.put("bytesBefore", r.sourceBytes());
        out.put("bytesAfter", r.targetBytes());
        out.put("note", r.note());
        return out;
    }

    // ------------------------------------------------------------------ answers

    private byte[] json(Object o) {
        try {
            return JSON.writeValueAsBytes(o);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON: " + e.getOriginalMessage(), e);
        }
    }

    private FullHttpResponse json(HttpResponseStatus status, Object o) {
        FullHttpResponse r = ok("application/json", json(o));
        r.setStatus(status);
        return r;
    }

    private static FullHttpResponse ok(String type, String body) {
        return ok(type, body.getBytes(StandardCharsets.UTF_8));
    }

    private static FullHttpResponse ok(String type, byte[] body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
        return r;
    }

    private void refuse(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status, String message) {
        refuse(ctx, keepAlive, status, message, null);
    }

    /** Answers {@code status} and one line; a 405 with the methods the path accepts in its Allow header. */
    private void refuse(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status, String message,
            String allow) {
        metrics.refused(status.code()).increment();
        FullHttpResponse r = ok("text/plain; charset=utf-8", status.code() + " " + oneLine(message) + "\n");
        r.setStatus(status);
        if (allow != null) {
            r.headers().set(HttpHeaderNames.ALLOW, allow);
        }
        if (status.equals(HttpResponseStatus.UNAUTHORIZED)) {
            r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"htod admin\"");
        }
        send(ctx, keepAlive, r);
    }

    private void fail(ChannelHandlerContext ctx, boolean keepAlive, Throwable e) {
        String what = e instanceof HtodException ? "store error" : e.getClass().getSimpleName();
        System.err.println("htod-sample: 500 on a request: " + what + ": " + oneLine(String.valueOf(e.getMessage())));
        refuse(ctx, keepAlive, HttpResponseStatus.INTERNAL_SERVER_ERROR, what + ": " + e.getMessage());
    }

    private static String oneLine(String s) {
        String l = s.replace('\r', ' ').replace('\n', ' ');
        return l.length() <= 500 ? l : l.substring(0, 497) + "...";
    }

    static void send(ChannelHandlerContext ctx, boolean keepAlive, FullHttpResponse r) {
        if (r.status().equals(HttpResponseStatus.NOT_MODIFIED)) {
            // No Content-Length: a 304 has no content, and its Content-Length would be read as the
            // length of the page it stands for (RFC 9110 §8.6); it said 0.
            r.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
        } else {
            HttpUtil.setContentLength(r, r.content().readableBytes());
        }
        if (keepAlive) {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.writeAndFlush(r);
        } else {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // a broken connection: nothing to answer on it
    }
}
