package org.htod.sample;

import io.micrometer.core.instrument.Gauge;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;
import org.htod.fragment.PublishResult;

/**
 * The publishing server: one store, its fragment cache, the publisher that writes it, and a
 * Netty HTTP server in front. {@link #start} opens (and after a crash recovers) the store, loads
 * the demo site into an empty one when asked, and binds; {@link #close} stops accepting, applies
 * what is queued and closes the store cleanly, which makes the next start fast.
 */
final class PublishingServer implements AutoCloseable {
    /**
     * @param data the store file
     * @param host the address to bind (loopback by default)
     * @param port 0 for any free port
     * @param maxBody largest publish body, in bytes
     * @param maxAge Cache-Control max-age of pages without a nearer expiry
     * @param demo the site to load into an empty store, or null
     * @param filler extra leaf fragments to publish into an empty store (restart measurements)
     * @param idle how long a connection may send nothing before it is closed
     * @param maxConnections connections open at most: one more is answered 503 as soon as it is
     *     accepted, and closed
     * @param requestTime how long a request may take to arrive whole, from its first byte: past it,
     *     408 and the connection closed
     * @param adminToken the secret an admin request carries as {@code Authorization: Bearer <token>};
     *     null for none, and then the admin endpoints answer 403
     */
    record Config(Path data, String host, int port, int maxBody, Duration maxAge, DemoSite demo, int filler,
            Duration idle, int maxConnections, Duration requestTime, String adminToken) {
        /** Connections open at most, by default. */
        static final int MAX_CONNECTIONS = 1024;
        /** The time a request has to arrive whole, by default. */
        static final Duration REQUEST_TIME = Duration.ofSeconds(30);

        Config {
            if (adminToken != null && adminToken.isBlank()) {
                throw new IllegalArgumentException("the admin token is empty");
            }
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnections must be positive, found " + maxConnections);
            }
            if (requestTime.isNegative() || requestTime.isZero()) {
                throw new IllegalArgumentException("requestTime must be positive, found " + requestTime);
            }
        }

        /** Connections idle for a minute closed. */
        Config(Path data, String host, int port, int maxBody, Duration maxAge, DemoSite demo, int filler) {
            this(data, host, port, maxBody, maxAge, demo, filler, Duration.ofMinutes(1));
        }

        /**
         * At most {@link #MAX_CONNECTIONS} connections, {@link #REQUEST_TIME} for a request; no
         * admin token: the admin endpoints answer 403.
         */
        Config(Path data, String host, int port, int maxBody, Duration maxAge, DemoSite demo, int filler,
                Duration idle) {
            this(data, host, port, maxBody, maxAge, demo, filler, idle, MAX_CONNECTIONS, REQUEST_TIME, null);
        }

        /** This configuration with {@code token} as the admin token (null for none). */
        Config withAdminToken(String token) {
            return new Config(data, host, port, maxBody, maxAge, demo, filler, idle, maxConnections, requestTime, token);
        }

        /** This configuration with these limits on connections. */
        Config withLimits(int maxConnections, Duration requestTime) {
            return new Config(data, host, port, maxBody, maxAge, demo, filler, idle, maxConnections, requestTime,
                    adminToken);
        }

        /** Without the admin token, which is a secret. */
        @Override
        public String toString() {
            return "Config[data=" + data + ", host=" + host + ", port=" + port + ", maxBody=" + maxBody + ", maxAge="
                    + maxAge + ", filler=" + filler + ", idle=" + idle + ", maxConnections=" + maxConnections
                    + ", requestTime=" + requestTime + ", adminToken="
                    + (adminToken == null ? "none" : "(set)") + "]";
        }
    }

    /** What {@code GET /stats} answers. */
    record Stats(String url, String store, double uptimeSeconds, StoreFigures.Snapshot figures, Counts counts,
            Map<String, Double> publishLatencyMs, Map<String, Double> readLatencyMs, List<ServerMetrics.Sample> history) {}

    record Counts(long publishes, long units, long rebuilds, long reconstructions, long pageReads, long notModified) {}

    private final Config config;
    /** What times to live and max-ages are measured by. */
    private final Clock clock = Clock.systemUTC();
    private final HtodStore store;
    private final FragmentCache cache;
    /** Every unit applied to the cache after the first load goes through it: see {@link #apply} and {@link #sweep}. */
    private final PageExpiries expiries;
    private final ServerMetrics metrics = new ServerMetrics();
    private final Publisher publisher;
    private final StoreFigures figures;
    private final ScheduledExecutorService ticks;
    // Created once the store is open: each NIO event loop holds a selector (file descriptors).
    private final EventLoopGroup boss;
    private final EventLoopGroup io;
    private final EventExecutorGroup app;
    private final Channel channel;
    /** Every open connection, closed before the executors stop so that no pipeline is torn down after them. */
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    /** Connections whose pipeline is not torn down yet: see {@link #awaitTornDown}. */
    private final AtomicInteger pipelines = new AtomicInteger();
    /** Connections accepted and not closed yet, at most {@link Config#maxConnections}. */
    private final AtomicInteger open = new AtomicInteger();
    /** Connections refused for the limit and not closed yet, at most {@link Refused#MAX}. */
    private final AtomicInteger refusing = new AtomicInteger();
    private final long startedNanos;
    final String loadReport;

    private PublishingServer(Config config, UnaryOperator<Function<List<Change>, PublishResult>> writes) {
        this.config = config;
        this.startedNanos = System.nanoTime();
        try {
            Path parent = config.data().toAbsolutePath().getParent();
            Files.createDirectories(parent);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the directory of " + config.data(), e);
        }
        // Log mode (the default), durability NONE: each unit of the publisher is one log record (a
        // WriteBatch), all or none after a crash, followed by one sync; a publish is answered only
        // after that sync, so an answered publish is durable.
        this.store = Htod.builder(config.data()).durability(Durability.NONE).open();
        try {
            this.cache = FragmentCache.open(store, "site", clock);
            this.expiries = new PageExpiries(cache, clock);
            this.loadReport = firstLoad();
            this.publisher = new Publisher(writes.apply(this::apply), metrics);
            this.figures = new StoreFigures(store, cache, ServerMetrics.since(startedNanos));
            figures.bindTo(metrics.registry);
            Gauge.builder("htod.connections", open, AtomicInteger::get)
                    .description("connections open").register(metrics.registry);
            this.ticks = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "htod-sample-ticks");
                t.setDaemon(true);
                return t;
            });
            ticks.scheduleAtFixedRate(metrics::sample, 1, 1, TimeUnit.SECONDS);
            ticks.scheduleWithFixedDelay(this::sweep, 5, 5, TimeUnit.SECONDS);
            this.boss = new NioEventLoopGroup(1);
            this.io = new NioEventLoopGroup(2);
            this.app = new DefaultEventExecutorGroup(8);
            this.channel = bind();
        } catch (Throwable e) {
            // Whatever failed, an Error or an exception Netty throws undeclared included, all that
            // was started is stopped and the store closed: a failed start leaves nothing open or
            // locked. A failure to do so is added to e, which stays the reason.
            RuntimeException stuck = drain();
            if (stuck != null) {
                e.addSuppressed(stuck);
            }
            release(e, stuck != null);
            throw e;
        }
    }

    static PublishingServer start(Config config) {
        return new PublishingServer(config, UnaryOperator.identity());
    }

    /** As {@link #start(Config)}, the publisher applying each unit through {@code writes} around the cache's apply. */
    static PublishingServer start(Config config, UnaryOperator<Function<List<Change>, PublishResult>> writes) {
        return new PublishingServer(config, writes);
    }

    /** Before the server is bound: no page is read yet, so no expiry is kept that the load could change. */
    private String firstLoad() {
        // The graph's counts first: one record. cache1's size is exact but, after a crash, reads
        // the table once for every key the log put back in the write buffer (seconds for 100,000).
        if (cache.graph().nodeCount() > 0 || cache.fragmentCount() > 0) {
            return null;
        }
        long t0 = System.nanoTime();
        int n = 0;
        if (config.demo() != null) {
            n += config.demo().load(cache);
        }
        for (int i = 0; i < config.filler(); i += 5_000) {
            List<Change> unit = new java.util.ArrayList<>();
            for (int k = i; k < Math.min(config.filler(), i + 5_000); k++) {
                unit.add(Change.publish("/archive/" + (k / 1000) + "/" + k + ".html", "<p>archived result " + k + ": "
                        + "x".repeat(200 + k % 400) + "</p>\n"));
            }
            cache.apply(unit);
            n += unit.size();
        }
        return n == 0 ? null : String.format("loaded %,d fragments into the empty store in %.1f s", n,
                ServerMetrics.since(t0).toMillis() / 1000.0);
    }

    private Channel bind() {
        HttpApi api = new HttpApi(this);
        ServerBootstrap b = new ServerBootstrap().group(boss, io).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        // At most config.maxConnections(): there was no limit, and each connection
                        // holds a descriptor and buffers. One more is answered 503 and closed.
                        if (open.incrementAndGet() > config.maxConnections()) {
                            open.decrementAndGet();
                            metrics.connectionsRefused.increment();
                            refuse(ch);
                            return;
                        }
                        ch.closeFuture().addListener(f -> open.decrementAndGet());
                        connections.add(ch);
                        pipelines.incrementAndGet();
                        // Closed once it sends nothing for config.idle(): a client that opened a
                        // connection, or began a request, and went quiet held it and its buffers for
                        // ever (600 of them took 680 MB). Not while it waits for an answer. A request
                        // that does not arrive whole within config.requestTime() is answered 408.
                        RequestDeadline deadline = new RequestDeadline(config.requestTime());
                        InOrderAnswers inOrder = new InOrderAnswers(deadline, metrics);
                        ch.pipeline().addLast(new TornDown())
                                .addLast(new IdleStateHandler(config.idle().toMillis(), 0, 0, TimeUnit.MILLISECONDS))
                                .addLast(new CloseWhenIdle(inOrder)).addLast(deadline).addLast(new ServerCodec(deadline))
                                .addLast(inOrder).addLast(new Aggregator(config.maxBody())).addLast(app, api);
                    }
                });
        ChannelFuture f = b.bind(config.host(), config.port()).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new IllegalStateException("cannot listen on " + config.host() + ":" + config.port() + ": " + f.cause(),
                    f.cause());
        }
        return f.channel();
    }

    /**
     * Answers a connection past the limit {@code 503} with {@code Retry-After} and closes it. It
     * was closed without a word, which a client or a load balancer takes for a failed server, not
     * a full one. The answer goes at once, without waiting for the request: a slow client must not
     * keep the server waiting on a connection it refuses, and HTTP/1.1 lets a server answer and
     * close whenever it must (RFC 9112 §9.6). The connection takes no slot; it is half closed
     * after the answer and what the client sends meanwhile is read and dropped, for {@link
     * Refused#LINGER} at most: closed with the request unread, it would be reset, and the client
     * could lose the answer. At most {@link Refused#MAX} linger so; past them one is closed at
     * once, unanswered, so that a flood of connections holds a bounded number of descriptors.
     */
    private void refuse(SocketChannel ch) {
        if (refusing.incrementAndGet() > Refused.MAX) {
            refusing.decrementAndGet();
            ch.close();
            return;
        }
        ch.closeFuture().addListener(f -> refusing.decrementAndGet());
        ch.pipeline().addLast(new HttpResponseEncoder()).addLast(new Refused());
    }

    /** What a connection past the limit gets: see {@link #refuse}. Runs on its I/O thread only. */
    private static final class Refused extends io.netty.channel.ChannelInboundHandlerAdapter {
        /** Connections refused and not closed yet, at most. */
        static final int MAX = 64;
        /** How long a refused connection is read, at most, after its answer. */
        static final Duration LINGER = Duration.ofSeconds(1);
        /** The Retry-After of the answer, in seconds: a slot is freed as soon as a connection closes. */
        static final int RETRY_AFTER = 1;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            // No content: the answer goes before the request is read, so it answers a HEAD as well
            // as a GET, and an answer to a HEAD has none (RFC 9110 §9.3.2). It carried a line,
            // which a client that sent a HEAD read as the start of the next answer. The status
            // and Retry-After say what there is to say.
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.SERVICE_UNAVAILABLE);
            r.headers().set(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            ctx.writeAndFlush(r).addListener((ChannelFutureListener) f -> {
                if (f.isSuccess() && f.channel() instanceof SocketChannel c) {
                    c.shutdownOutput();
                    ctx.executor().schedule(() -> {
                        ctx.close();
                    }, LINGER.toMillis(), TimeUnit.MILLISECONDS);
                } else {
                    ctx.close();
                }
            });
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg); // the request is not read: the answer is the same whatever it is
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // reset by the client: nothing more to say
        }
    }

    /**
     * Closes a connection its {@link IdleStateHandler} finds idle, unless a request it sent whole
     * waits for its answer (a compaction, a publish queued behind one, the requests after it).
     */
    private static final class CloseWhenIdle extends io.netty.channel.ChannelInboundHandlerAdapter {
        private final InOrderAnswers requests;

        CloseWhenIdle(InOrderAnswers requests) {
            this.requests = requests;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent) {
                if (!requests.awaitingAnswer()) {
                    ctx.close();
                }
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }
    }

    /** First in a connection's pipeline, so removed last when it is torn down. */
    private final class TornDown extends ChannelHandlerAdapter {
        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            pipelines.decrementAndGet();
        }
    }

    /**
     * Answers an oversized publish with 413 and one line. A keep-alive connection stays open and
     * the rest of the body is read and dropped (the aggregator's own handling after this call):
     * closing with the body's bytes unread would reset the connection, and a client still sending
     * could lose the answer. Other connections are closed after the answer.
     */
    private static final class Aggregator extends HttpObjectAggregator {
        private final int max;

        Aggregator(int max) {
            super(max);
            this.max = max;
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    Unpooled.copiedBuffer("413 the body is larger than " + max + " bytes\n", StandardCharsets.UTF_8));
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
            HttpUtil.setContentLength(r, r.content().readableBytes());
            if (oversized instanceof FullHttpMessage || !HttpUtil.isKeepAlive(oversized)) {
                ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            }
        }
    }

    /** Applies one unit of the publisher, through the pages' expiries, which it may change. */
    private PublishResult apply(List<Change> unit) {
        return expiries.publish(unit, cache::apply);
    }

    /** Unpublishes the fragments whose time to live has ended; every 5 s, and from tests. */
    void sweep() {
        try {
            var r = expiries.sweep(cache::sweepExpired);
            metrics.rebuilds.increment(r.rebuilt().size());
        } catch (RuntimeException e) {
            System.err.println("htod-sample: expiry sweep failed: " + e.getMessage());
        }
    }

    int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    String url() {
        String h = config.host().contains(":") ? "[" + config.host() + "]" : config.host();
        return "http://" + h + ":" + port() + "/";
    }

    FragmentCache cache() {
        return cache;
    }

    PageExpiries expiries() {
        return expiries;
    }

    Clock clock() {
        return clock;
    }

    ServerMetrics metrics() {
        return metrics;
    }

    Publisher publisher() {
        return publisher;
    }

    Duration maxAge() {
        return config.maxAge();
    }

    /** The secret of the admin endpoints, or null: they are off. */
    String adminToken() {
        return config.adminToken();
    }

    HtodStore store() {
        return store;
    }

    /** Time from the start of the server to a store open, loaded and ready to serve. */
    Duration readyIn() {
        return figures.readyIn();
    }

    Stats stats() {
        var m = metrics;
        Counts c = new Counts((long) m.publishes.count(), (long) m.units.count(), (long) m.rebuilds.count(),
                (long) m.reconstructions.count(), (long) m.pageReads.count(), (long) m.notModified.count());
        return new Stats(url(), config.data().toString(), ServerMetrics.since(startedNanos).toMillis() / 1000.0,
                figures.snapshot(), c, ServerMetrics.percentiles(m.publishLatency), ServerMetrics.percentiles(m.readLatency),
                m.history());
    }

    /**
     * Stops accepting, lets the writer apply every publish queued and their answers reach their
     * sockets, then closes the connections, the executors and last the store. A publish applied
     * during the close is answered as such: closing the connections first would leave its client
     * unable to tell that it was.
     *
     * @throws IllegalStateException if the writer (or an expiry sweep) is still writing after
     *     {@link Publisher#DRAIN}: the store is then left open, not closed under it, and the next
     *     start recovers it
     */
    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        RuntimeException stuck = drain();
        flushAnswers();
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        awaitTornDown();
        RuntimeException failed = release(stuck, stuck != null);
        if (stuck != null) {
            throw stuck;
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** Stops the writer once it has applied and answered what is queued; null, or why it is still writing. */
    private RuntimeException drain() {
        if (publisher == null) {
            return null;
        }
        try {
            publisher.close();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /**
     * Waits until the answers the writer handed to the application executors are written to their
     * sockets. An answer goes from the writer to its connection's executor in {@code app}, which
     * writes it through the connection's I/O thread: a task run on every executor after the drain
     * comes after every answer queued there, and an empty write on a connection (passed through by
     * the HTTP encoder) completes once the writes before it are flushed.
     */
    private void flushAnswers() {
        for (EventExecutor e : app) {
            e.submit(() -> {}).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        connections.writeAndFlush(Unpooled.EMPTY_BUFFER).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /**
     * Waits until the pipelines of the closed connections are torn down. That happens after the
     * close, on the connection's I/O thread, its executor in {@code app}, then its I/O thread
     * again: an I/O thread stopped in between fails the teardown, and Netty logs a warning for
     * each connection.
     */
    private void awaitTornDown() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        boolean interrupted = false;
        while (pipelines.get() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops the ticks and the event loops, then closes the store unless {@code storeInUse}; the
     * writer is stopped already. Each step is taken even if one before it failed. The failures are
     * added to {@code cause} as suppressed; with no cause, the first is returned carrying the others.
     */
    private RuntimeException release(Throwable cause, boolean storeInUse) {
        List<RuntimeException> failures = new ArrayList<>();
        if (ticks != null) {
            // shutdown, not shutdownNow: an interrupt landing in a sweep's write could close the
            // store's file channel under it. The periodic tasks are cancelled, a sweep running ends.
            ticks.shutdown();
            if (!awaitTermination(ticks, Publisher.DRAIN)) {
                storeInUse = true;
                failures.add(new IllegalStateException("the expiry sweep is still running after "
                        + Publisher.DRAIN.toSeconds() + " s: the store must not be closed under it"));
            }
        }
        // The app executors last: while I/O threads run, they may hand a connection's events to them.
        for (EventExecutorGroup g : new EventExecutorGroup[] {boss, io, app}) {
            if (g != null) {
                try {
                    g.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
                } catch (RuntimeException e) {
                    failures.add(e);
                }
            }
        }
        if (storeInUse) {
            System.err.println("htod-sample: the store " + config.data() + " is left open, still being written;"
                    + " the next start recovers it");
        } else {
            try {
                store.close();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        if (cause != null) {
            failures.forEach(cause::addSuppressed);
            return null;
        }
        if (failures.isEmpty()) {
            return null;
        }
        RuntimeException first = failures.get(0);
        failures.subList(1, failures.size()).forEach(first::addSuppressed);
        return first;
    }

    /** Waits for {@code e} to terminate, up to {@code d}, through interrupts (kept for the caller). */
    private static boolean awaitTermination(ExecutorService e, Duration d) {
        long deadline = System.nanoTime() + d.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return e.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException x) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
