package org.htod;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.System.Logger.Level;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.htod.core.alloc.HeapStats;

/**
 * The figures of {@link HtodStore#stats()} as Micrometer meters, all tagged {@code store} with the
 * file's name: counters of the maps' operations, device I/O, syncs, group commits and entry-cache
 * hits, and in log mode of changes buffered and absorbed, installs, keys installed and checkpoints;
 * gauges of bytes, entries per map, buffer fill, buffered keys and absorption, group-commit size,
 * fragmentation and the last open's time; and timers {@code htod.operation} ({@code op} = get,
 * put, remove) with the 50th, 90th and 99th percentiles. Micrometer is an optional dependency of
 * htod: only a program that uses this class needs it.
 *
 * <pre>{@code
 * new HtodMetrics(store).bindTo(registry);
 * }</pre>
 *
 * <p>Counters count from the store's open; the timers time operations from the first binding on
 * (until then the store reads no clock). Gauges of entries cover the maps the store had when
 * bound. The meters are removed from the registry when the store closes.
 */
// Micrometer's types in this API are the embedder's to bring (an optional dependency), not re-exported.
@SuppressWarnings("exports")
public final class HtodMetrics implements MeterBinder {
    private static final System.Logger LOG = System.getLogger(HtodMetrics.class.getName());

    private final HtodStore store;
    private final Tags tags;

    public HtodMetrics(HtodStore store) {
        this.store = java.util.Objects.requireNonNull(store, "store");
        this.tags = Tags.of(Tag.of("store", store.device().name()));
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (store.isClosed()) {
            return; // nothing to measure; a binding kept and applied again later registers nothing
        }
        String storeName = tags.stream().filter(t -> t.getKey().equals("store")).findFirst().orElseThrow().getValue();
        // Meters under this store's name are a closed store's (two open stores never share a
        // name): replaced, not taken over, since a registry hands back the meter it has for a
        // name and tags, and those read the closed store.
        removeIf(registry, m -> storeName.equals(m.getId().getTag("store")));
        OpMeter meter = store.meter();
        // The device is read through the store each time: an online compaction replaces it (its
        // counts start again from zero).
        for (OpMeter.Op op : OpMeter.Op.values()) {
            String name = op.name().toLowerCase(java.util.Locale.ROOT);
            ToDoubleFunction<OpMeter> f = switch (op) {
                case GET -> m -> m.counts().gets();
                case PUT -> m -> m.counts().puts();
                case REMOVE -> m -> m.counts().removes();
            };
            FunctionCounter.builder("htod.operations", meter, f).tags(tags).tag("op", name)
                    .description("operations of the store's maps since it opened").register(registry);
        }
        FunctionCounter.builder("htod.operations", meter, m -> m.counts().unchanged()).tags(tags).tag("op", "unchanged")
                .description("conditional writes that found nothing to do").register(registry);
        Map<OpMeter.Op, Timer> timers = new EnumMap<>(OpMeter.Op.class);
        for (OpMeter.Op op : OpMeter.Op.values()) {
            timers.put(op, Timer.builder("htod.operation").tags(tags).tag("op", op.name().toLowerCase(java.util.Locale.ROOT))
                    .description("time of a map operation (a putAll or a batch is one sample)")
                    .publishPercentiles(0.5, 0.9, 0.99).register(registry));
        }
        meter.attach((op, nanos) -> timers.get(op).record(nanos, TimeUnit.NANOSECONDS));

        FunctionCounter.builder("htod.device.reads", store, s -> s.device().counts().reads()).tags(tags).register(registry);
        FunctionCounter.builder("htod.device.writes", store, s -> s.device().counts().writes()).tags(tags).register(registry);
        FunctionCounter.builder("htod.device.syncs", store, s -> s.device().counts().syncs()).tags(tags)
                .description("flushes of the device to stable storage").register(registry);
        FunctionCounter.builder("htod.device.bytes", store, s -> s.device().counts().bytesRead()).tags(tags).tag("direction", "read")
                .baseUnit("bytes").register(registry);
        FunctionCounter.builder("htod.device.bytes", store, s -> s.device().counts().bytesWritten()).tags(tags)
                .tag("direction", "write").baseUnit("bytes").register(registry);

        Gauge.builder("htod.file.bytes", store, s -> s.device().size()).tags(tags).baseUnit("bytes").register(registry);
        heapGauge(registry, "htod.heap.used.bytes", HeapStats::usedBytes, "bytes");
        heapGauge(registry, "htod.heap.allocated.bytes", HeapStats::allocatedBytes, "bytes");
        heapGauge(registry, "htod.heap.free.bytes", HeapStats::freeBytes, "bytes");
        Gauge.builder("htod.fragmentation", store, s -> s.storage().heap().stats().internalFragmentation()).tags(tags)
                .tag("kind", "internal").description("storage allocated over storage requested").register(registry);
        Gauge.builder("htod.fragmentation", store, s -> s.storage().heap().stats().externalFragmentation()).tags(tags)
                .tag("kind", "external").description("most storage ever in use over storage allocated").register(registry);
        Gauge.builder("htod.fragmentation", store, s -> s.storage().heap().stats().totalFragmentation()).tags(tags)
                .tag("kind", "total").register(registry);
        for (String map : store.mapNames()) {
            HtodMap<byte[], byte[]> m = store.map(map, Codec.bytes(), Codec.bytes());
            // Held strongly: a gauge keeps only a weak reference by default, and no one else
            // holds this view of the map, so a collection made the gauge read NaN.
            Gauge.builder("htod.entries", m, HtodMap::longSize).tags(tags).tag("map", map).strongReference(true)
                    .register(registry);
        }
        FunctionCounter.builder("htod.cache.hits", store, s -> s.tableStore().cacheCounts()[0]).tags(tags).register(registry);
        FunctionCounter.builder("htod.cache.misses", store, s -> s.tableStore().cacheCounts()[1]).tags(tags)
                .register(registry);
        if (store.logged()) {
            FunctionCounter.builder("htod.log.group.commits", store, s -> s.layer().figures().groupCommits()).tags(tags)
                    .description("writes of the log, each a group of records made durable together").register(registry);
            FunctionCounter.builder("htod.log.records", store, s -> s.layer().figures().recordsCommitted()).tags(tags)
                    .register(registry);
            Gauge.builder("htod.log.group.size", store, s -> {
                var f = s.layer().figures();
                return f.groupCommits() == 0 ? 0 : (double) f.recordsCommitted() / f.groupCommits();
            }).tags(tags)
                    .description("records per group commit since the store opened").register(registry);
            Gauge.builder("htod.buffer.bytes", store, s -> s.layer().figures().bufferBytes()).tags(tags).baseUnit("bytes")
                    .register(registry);
            Gauge.builder("htod.buffer.fill", store, s -> {
                var f = s.layer().figures();
                return (double) f.bufferBytes() / f.bufferCapacity();
            }).tags(tags).description("write buffer bytes over its capacity").register(registry);
            Gauge.builder("htod.buffer.absorption", store, s -> {
                var f = s.layer().figures();
                return f.changesBuffered() == 0 ? 0 : (double) f.changesAbsorbed() / f.changesBuffered();
            }).tags(tags)
                    .description("changes replaced in the buffer by a later change of their key, over changes buffered")
                    .register(registry);
            Gauge.builder("htod.buffer.keys", store, s -> s.layer().figures().bufferedKeys()).tags(tags)
                    .description("keys whose latest change waits in the write buffer for an install").register(registry);
            FunctionCounter.builder("htod.buffer.changes", store, s -> s.layer().figures().changesBuffered()).tags(tags)
                    .description("changes put into the write buffer").register(registry);
            FunctionCounter.builder("htod.buffer.absorbed", store, s -> s.layer().figures().changesAbsorbed()).tags(tags)
                    .description("changes replaced in the buffer by a later change of their key: entry writes saved")
                    .register(registry);
            FunctionCounter.builder("htod.installs", store, s -> s.layer().figures().installs()).tags(tags)
                    .description("install batches of the flusher").register(registry);
            FunctionCounter.builder("htod.installed.keys", store, s -> s.layer().figures().installedKeys()).tags(tags)
                    .description("keys installed into the tables, one entry write (or removal) each").register(registry);
            FunctionTimer.builder("htod.buffer.waits", store, s -> s.layer().figures().bufferWaits(),
                    s -> s.layer().figures().bufferWaitNanos(), TimeUnit.NANOSECONDS).tags(tags)
                    .description("writes that waited for room in the write buffer: the flusher behind the writers")
                    .register(registry);
            FunctionTimer.builder("htod.log.waits", store, s -> s.layer().figures().logWaits(),
                    s -> s.layer().figures().logWaitNanos(), TimeUnit.NANOSECONDS).tags(tags)
                    .description("writes that waited for room in the log: its checkpoints behind the writers")
                    .register(registry);
            FunctionCounter.builder("htod.install.reads", store, s -> s.layer().figures().installReads()).tags(tags)
                    .tag("source", "device")
                    .description("chain entries the installs read to find their keys, by where they came from")
                    .register(registry);
            FunctionCounter.builder("htod.install.reads", store, s -> s.layer().figures().installReadsCached())
                    .tags(tags).tag("source", "cache")
                    .description("chain entries the installs read to find their keys, by where they came from")
                    .register(registry);
            FunctionCounter.builder("htod.flusher.busy", store, s -> s.layer().figures().flusherBusyNanos() / 1e9)
                    .tags(tags).baseUnit("seconds")
                    .description("time the flusher spent at work, not waiting for it (its waits for locks and log room included)")
                    .register(registry);
            FunctionCounter.builder("htod.checkpoints", store, s -> s.layer().figures().checkpoints()).tags(tags)
                    .description("checkpoints taken; each frees the log up to the oldest change still buffered").register(registry);
        }
        Gauge.builder("htod.recovery.seconds", store, s -> s.recoveryReport().took().toNanos() / 1e9).tags(tags)
                .description("time the last open took, recovery included").baseUnit("seconds").register(registry);
        Gauge.builder("htod.recovery.clean", store, s -> s.recoveryReport().clean() ? 1 : 0).tags(tags)
                .description("1 if the store had been closed cleanly before its last open").register(registry);
        LOG.log(Level.DEBUG, () -> "meters of " + store + " bound to " + registry.getClass().getSimpleName());
        // Removed when the store closes: kept, the entries gauges held the closed store and all its
        // memory for the registry's life, and a store opened again on the file found its meters
        // taken by the closed one's (a registry keeps the first of a name and tags), reading NaN.
        java.util.Set<Meter> ours = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Meter m : registry.getMeters()) {
            if (storeName.equals(m.getId().getTag("store"))) {
                ours.add(m);
            }
        }
        // These very meters, by identity: a store opened again on the file may have registered its
        // own under the same names by the time this runs.
        store.onClose(() -> removeIf(registry, ours::contains));
    }

    private static void removeIf(MeterRegistry registry, java.util.function.Predicate<Meter> which) {
        for (Meter m : List.copyOf(registry.getMeters())) {
            if (which.test(m)) {
                registry.remove(m);
            }
        }
    }

    private void heapGauge(MeterRegistry registry, String name, ToDoubleFunction<HeapStats> f, String unit) {
        Gauge.builder(name, store, s -> f.applyAsDouble(s.storage().heap().stats())).tags(tags).baseUnit(unit)
                .register(registry);
    }
}
