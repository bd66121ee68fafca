package org.htod.sample;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import org.htod.HtodMetrics;
import org.htod.HtodStore;
import org.htod.RecoveryReport;
import org.htod.fragment.FragmentCache;

/**
 * The figures of the store under the server: what its maps hold and what its last open found.
 * The store's own figures (operations, device I/O, group commit, buffer fill, fragmentation,
 * timers) come from its binder, {@link HtodMetrics}, which {@link #bindTo} adds beside the
 * publishing system's counts.
 */
final class StoreFigures {
    private final HtodStore store;
    private final FragmentCache cache;
    private final Duration readyIn;

    /**
     * What the last open of the store found, with the time the whole server took to be ready. In
     * log mode ({@code logged}) an open reads the last checkpoint and replays the log after it: the
     * log figures are set and the heap scan and recount figures are zero; in direct mode the
     * reverse.
     */
    record Recovery(boolean clean, boolean logged, String heapPath, double heapMillis, long heapHeadersRead,
            double tablesMillis, long entriesCounted, long leakedBlocksFreed, long entriesRelinked, long logBytesRead,
            long logRecordsReplayed, long changesBuffered, double serverReadyMillis, String detail) {}

    /** Counts of the publishing system's maps, and the recovery report. */
    record Snapshot(long fragments, long assembled, long expiring, long graphNodes, long graphEdges, List<String> maps,
            Recovery recovery) {}

    StoreFigures(HtodStore store, FragmentCache cache, Duration readyIn) {
        this.store = store;
        this.cache = cache;
        this.readyIn = readyIn;
    }

    /** How long the server took from its start to opening the store, loading and counting: its readiness. */
    Duration readyIn() {
        return readyIn;
    }

    Snapshot snapshot() {
        RecoveryReport r = store.recoveryReport();
        Recovery rec = new Recovery(r.clean(), store.logged(), r.heapPath(), millis(r.heapTook()), r.heapHeadersRead(),
                millis(r.tablesTook()), r.entriesCounted(), r.leakedBlocksFreed(), r.entriesRelinked(), r.logBytesRead(),
                r.logDataRecords() + r.logInstallRecords(), r.changesBuffered(), millis(readyIn), r.detail());
        return new Snapshot(cache.fragmentCount(), cache.assembledCount(), cache.expiringCount(), cache.graph().nodeCount(),
                cache.graph().edgeCount(), store.mapNames(), rec);
    }

    void bindTo(MeterRegistry registry) {
        new HtodMetrics(store).bindTo(registry);
        Gauge.builder("htod.fragments", cache, FragmentCache::fragmentCount).description("fragments in cache1")
                .register(registry);
        Gauge.builder("htod.assembled", cache, FragmentCache::assembledCount).description("assembled composites in cache2")
                .register(registry);
        Gauge.builder("htod.expiring", cache, FragmentCache::expiringCount)
                .description("fragments with a time to live").register(registry);
        Gauge.builder("htod.graph.nodes", cache, c -> c.graph().nodeCount()).register(registry);
        Gauge.builder("htod.graph.edges", cache, c -> c.graph().edgeCount()).register(registry);
        Gauge.builder("htod.open.seconds", store, s -> s.recoveryReport().took().toNanos() / 1e9)
                .description("time the last open of the store took (recovery included)").register(registry);
        Gauge.builder("htod.open.clean", store, s -> s.recoveryReport().clean() ? 1 : 0)
                .description("1 if the store had been closed cleanly before its last open").register(registry);
    }

    private static double millis(Duration d) {
        return d.toNanos() / 1e6;
    }
}
