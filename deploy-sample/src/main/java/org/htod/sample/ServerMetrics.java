package org.htod.sample;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The server's own figures, through Micrometer: publishes, rebuilds, page reads, refusals, and
 * the latencies of publishes and reads (timers with percentiles), scraped as Prometheus text; and
 * a short history of rates for the status page's chart, sampled once a second.
 */
final class ServerMetrics {
    /** Seconds of rate history kept for the chart. */
    static final int HISTORY = 120;

    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final Counter publishes = Counter.builder("htod.publishes").description("changes acknowledged (durable)")
            .register(registry);
    final Counter units = Counter.builder("htod.publish.units").description("units committed (one sync each)")
            .register(registry);
    final Counter rebuilds = Counter.builder("htod.rebuilds").description("assembled fragments rebuilt")
            .register(registry);
    final Counter reconstructions = Counter.builder("htod.reconstructions")
            .description("rebuilds done by replacing changed spans only").register(registry);
    final Counter pageReads = Counter.builder("htod.page.reads").description("pages served (200 and 304)")
            .register(registry);
    final Counter connectionsRefused = Counter.builder("htod.connections.refused")
            .description("connections answered 503 and closed as soon as accepted: the limit was reached").register(registry);
    final Counter notModified = Counter.builder("htod.page.not.modified").description("304 answers").register(registry);
    final Timer publishLatency = Timer.builder("htod.publish.latency").description("from request to durable answer")
            .publishPercentiles(0.5, 0.9, 0.99).register(registry);
    final Timer readLatency = Timer.builder("htod.page.read.latency").description("page lookup and answer")
            .publishPercentiles(0.5, 0.9, 0.99).register(registry);

    /** One second of the chart. */
    record Sample(long epochSecond, double publishesPerSecond, double readsPerSecond, double rebuildsPerSecond) {}

    private final ArrayDeque<Sample> history = new ArrayDeque<>();
    private double lastPublishes;
    private double lastReads;
    private double lastRebuilds;
    private long lastNanos = System.nanoTime();

    Counter refused(int status) {
        return Counter.builder("htod.requests.refused").tag("status", Integer.toString(status)).register(registry);
    }

    /** Takes one sample of the rates since the last; called once a second by the server. */
    synchronized void sample() {
        long now = System.nanoTime();
        double secs = Math.max(1e-3, (now - lastNanos) / 1e9);
        double p = publishes.count();
        double r = pageReads.count();
        double b = rebuilds.count();
        history.addLast(new Sample(System.currentTimeMillis() / 1000, (p - lastPublishes) / secs, (r - lastReads) / secs,
                (b - lastRebuilds) / secs));
        while (history.size() > HISTORY) {
            history.removeFirst();
        }
        lastPublishes = p;
        lastReads = r;
        lastRebuilds = b;
        lastNanos = now;
    }

    synchronized List<Sample> history() {
        return new ArrayList<>(history);
    }

    /** Latency percentiles of a timer in milliseconds, keyed "p50", "p90", "p99", and "mean", "max". */
    static Map<String, Double> percentiles(Timer t) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (var v : t.takeSnapshot().percentileValues()) {
            m.put("p" + Math.round(v.percentile() * 100), v.value(TimeUnit.MILLISECONDS));
        }
        m.put("mean", t.mean(TimeUnit.MILLISECONDS));
        m.put("max", t.max(TimeUnit.MILLISECONDS));
        return m;
    }

    static Duration since(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }
}
