package org.htod.infinispan;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.RecoveryReport;
import org.htod.core.HtodException;
import org.infinispan.commons.configuration.ConfiguredBy;
import org.infinispan.commons.io.ByteBufferFactory;
import org.infinispan.commons.time.TimeService;
import org.infinispan.commons.util.IntSet;
import org.infinispan.commons.util.concurrent.CompletableFutures;
import org.infinispan.distribution.ch.KeyPartitioner;
import org.infinispan.marshall.persistence.PersistenceMarshaller;
import org.infinispan.persistence.PersistenceUtil;
import org.infinispan.persistence.spi.InitializationContext;
import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.persistence.spi.MarshallableEntryFactory;
import org.infinispan.persistence.spi.NonBlockingStore;
import org.infinispan.persistence.spi.PersistenceException;
import org.infinispan.util.concurrent.BlockingManager;
import org.reactivestreams.Publisher;

import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;

/**
 * htod as Infinispan's per-node persistent store: one htod file per cache and node, one htod map
 * per segment ({@link SegmentMaps}), each entry kept as {@link EntryLayout} describes.
 *
 * <p>No method blocks its caller: every file access runs through the context's {@link
 * BlockingManager}, and results come back on a non-blocking thread. Expiry is judged with the
 * context's {@link TimeService}, from the expiry time each entry carries; htod's own time to live
 * is not used, so that {@link #purgeExpired} can hand back what it removes.
 */
@ConfiguredBy(HtodStoreConfiguration.class)
public class HtodNonBlockingStore<K, V> implements NonBlockingStore<K, V> {
    /** File name of the store inside {@code <location>/<cache name>/htod/}. */
    public static final String FILE_NAME = "store.htod";

    private BlockingManager blocking;
    private TimeService time;
    private PersistenceMarshaller marshaller;
    private MarshallableEntryFactory<K, V> entries;
    private ByteBufferFactory buffers;
    private KeyPartitioner partitioner;
    private HtodStoreConfiguration config;
    private Path file;
    /** The open maps; null before start and after a stop that closed the store. */
    private volatile SegmentMaps maps;
    /** The builder of a store in a file, before the configuration's settings: {@link Htod#builder(Path)}. */
    private final Function<Path, Htod.Builder> builders;

    public HtodNonBlockingStore() {
        this(Htod::builder);
    }

    /** A store whose file is opened through {@code builders}: for tests, over a device that fails on purpose. */
    HtodNonBlockingStore(Function<Path, Htod.Builder> builders) {
        this.builders = builders;
    }

    @Override
    public CompletionStage<Void> start(InitializationContext ctx) {
        config = ctx.getConfiguration();
        blocking = ctx.getBlockingManager();
        time = ctx.getTimeService();
        marshaller = ctx.getPersistenceMarshaller();
        entries = ctx.getMarshallableEntryFactory();
        buffers = ctx.getByteBufferFactory();
        partitioner = ctx.getKeyPartitioner();
        String cacheName = ctx.getCache().getName();
        int segmentCount = ctx.getCache().getCacheConfiguration().clustering().hash().numSegments();
        boolean segmented = config.segmented();
        file = PersistenceUtil.getQualifiedLocation(ctx.getGlobalConfiguration(), config.location(), cacheName, "htod")
                .resolve(FILE_NAME);
        return blocking.runBlocking(() -> {
            boolean purge = ctx.canStoreDirectlyPurgeOnStartup(); // reads the global state
            HtodStore store = open(file);
            try {
                SegmentMaps m = SegmentMaps.open(store, file.toString(), segmented, segmentCount);
                if (purge) {
                    m.existing(null).forEach(map -> BatchWriter.removeAll(store, map, null));
                }
                maps = m;
            } catch (RuntimeException e) {
                RuntimeException thrown = e instanceof HtodException h ? failure("starting", h) : e;
                // The failure that stopped the start is the one to report: a close that fails
                // too (the device failing the same way) goes with it, not in its place.
                try {
                    store.close();
                } catch (RuntimeException c) {
                    thrown.addSuppressed(c);
                }
                throw thrown;
            }
        }, "htod-start");
    }

    private HtodStore open(Path path) {
        try {
            Files.createDirectories(path.getParent());
            return builders.apply(path)
                    .directMode(config.directMode())
                    .logSize(config.logSize())
                    .bufferSize(config.bufferSize())
                    .durability(config.durability())
                    .syncInterval(Duration.ofMillis(config.syncInterval()))
                    .cacheSize(config.cacheSize())
                    .storageMethod(config.storageMethod())
                    .grain(config.grain())
                    .loadFactor(config.loadFactor())
                    .open();
        } catch (IOException e) {
            throw new PersistenceException("cannot create the directory of " + path + ": " + e, e);
        } catch (HtodException e) {
            throw new PersistenceException("cannot open the htod store " + path + ": " + e.getMessage(), e);
        }
    }

    @Override
    public CompletionStage<Void> stop() {
        return blocking.runBlocking(() -> {
            SegmentMaps m = maps;
            if (m == null) {
                return;
            }
            try {
                m.store().close();
            } catch (HtodException e) {
                // A store whose close failed (its last install or checkpoint met a full disk) stays
                // open, its file locked: the maps are kept so that the next stop closes it again,
                // and the cache can start on the file once it has.
                throw failure("closing", e);
            }
            maps = null;
        }, "htod-stop");
    }

    /** Called when the cache is removed: closes the store and deletes its file. */
    @Override
    public CompletionStage<Void> destroy() {
        return stop().thenCompose(ignored -> blocking.runBlocking(() -> {
            try {
                Files.deleteIfExists(file);
                Files.deleteIfExists(file.getParent());
            } catch (IOException e) {
                throw new PersistenceException("cannot delete " + file + ": " + e, e);
            }
        }, "htod-destroy"));
    }

    @Override
    public Set<Characteristic> characteristics() {
        return EnumSet.of(Characteristic.SEGMENTABLE, Characteristic.BULK_READ, Characteristic.EXPIRATION);
    }

    /**
     * False before start, once htod has latched a failure ({@link HtodStore#failure()}: the store
     * refuses every change until it is reopened), or when the file is gone. Infinispan polls this
     * and, while it is false, fails the cache's operations that reach the store with a
     * StoreUnavailableException naming the store ({@link #toString()} says why), instead of
     * handing each to a store that refuses it. A failure htod gets over by itself (a full disk, a
     * log write that the next write heals) leaves the store available: unavailable, it would be
     * given no write to heal with.
     */
    @Override
    public CompletionStage<Boolean> isAvailable() {
        SegmentMaps m = maps;
        if (m == null || m.store().failure().isPresent()) {
            return CompletableFutures.completedFalse();
        }
        return blocking.supplyBlocking(() -> Files.isRegularFile(file), "htod-available");
    }

    /** The file, and the failure htod latched if it has: what Infinispan's StoreUnavailableException shows. */
    @Override
    public String toString() {
        SegmentMaps m = maps;
        String failed = m == null ? "" : m.store().failure().map(f -> ", failed: " + f.getMessage()).orElse("");
        return "HtodNonBlockingStore[" + (file == null ? "not started" : file) + (m == null ? ", stopped" : "") + failed + "]";
    }

    /** What opening the store found (clean, or recovered after a crash, and how long it took); null before start. */
    public RecoveryReport recoveryReport() {
        SegmentMaps m = maps;
        return m == null ? null : m.store().recoveryReport();
    }

    /** Whether the store writes through htod's log (the default) rather than in direct mode; false before start. */
    public boolean logged() {
        SegmentMaps m = maps;
        return m != null && m.store().logged();
    }

    // ------------------------------------------------------------------ single entries

    @Override
    public CompletionStage<MarshallableEntry<K, V>> load(int segment, Object key) {
        SegmentMaps m = running();
        byte[] k = keyBytes(key);
        return blocking.supplyBlocking(() -> {
            byte[] stored = read(m, segment, k);
            if (stored == null || EntryLayout.expired(stored, time.wallClockTime())) {
                return null;
            }
            return decode(key, stored, true);
        }, "htod-load");
    }

    @Override
    public CompletionStage<Boolean> containsKey(int segment, Object key) {
        SegmentMaps m = running();
        byte[] k = keyBytes(key);
        return blocking.supplyBlocking(() -> {
            byte[] stored = read(m, segment, k);
            return stored != null && !EntryLayout.expired(stored, time.wallClockTime());
        }, "htod-contains");
    }

    private byte[] read(SegmentMaps m, int segment, byte[] k) {
        HtodMap<byte[], byte[]> map = m.forRead(segment);
        try {
            return map == null ? null : map.get(k);
        } catch (HtodException e) {
            throw failure("reading a key of segment " + segment, e);
        }
    }

    @Override
    public CompletionStage<Void> write(int segment, MarshallableEntry<? extends K, ? extends V> entry) {
        SegmentMaps m = running();
        byte[] k = trimmed(entry.getKeyBytes());
        byte[] v = EntryLayout.encode(entry);
        try {
            checkSize(m, k, v);
        } catch (PersistenceException e) {
            return CompletableFuture.failedFuture(e);
        }
        return blocking.runBlocking(() -> {
            try {
                m.forWrite(segment).set(k, v);
            } catch (HtodException e) {
                throw failure("writing a key of segment " + segment, e);
            }
        }, "htod-write");
    }

    @Override
    public CompletionStage<Boolean> delete(int segment, Object key) {
        SegmentMaps m = running();
        byte[] k = keyBytes(key);
        return blocking.supplyBlocking(() -> {
            HtodMap<byte[], byte[]> map = m.forRead(segment);
            try {
                return map != null && map.delete(k);
            } catch (HtodException e) {
                throw failure("deleting a key of segment " + segment, e);
            }
        }, "htod-delete");
    }

    @Override
    public CompletionStage<Void> batch(int publisherCount, Publisher<SegmentedPublisher<Object>> removePublisher,
            Publisher<SegmentedPublisher<MarshallableEntry<K, V>>> writePublisher) {
        SegmentMaps m = running();
        BatchWriter batch = new BatchWriter();
        // Both publishers are subscribed together: Infinispan emits neither until both are.
        Single<Long> removes = Flowable.fromPublisher(removePublisher)
                .flatMap(sp -> Flowable.fromPublisher(sp).doOnNext(key -> batch.remove(sp.getSegment(), keyBytes(key))),
                        Math.max(1, publisherCount))
                .count();
        Single<Long> writes = Flowable.fromPublisher(writePublisher)
                .flatMap(sp -> Flowable.fromPublisher(sp).doOnNext(me -> {
                    byte[] k = trimmed(me.getKeyBytes());
                    byte[] v = EntryLayout.encode(me);
                    checkSize(m, k, v);
                    batch.write(sp.getSegment(), k, v);
                }), Math.max(1, publisherCount))
                .count();
        return Single.zip(writes, removes, (w, r) -> w + r)
                .toCompletionStage()
                .thenCompose(n -> batch.isEmpty() ? CompletableFutures.completedNull()
                        : blocking.runBlocking(() -> {
                            try {
                                batch.apply(m);
                            } catch (HtodException e) {
                                throw failure("applying a batch of " + n + " writes and removes", e);
                            }
                        }, "htod-batch"));
    }

    // ------------------------------------------------------------------ segments and bulk

    @Override
    public CompletionStage<Void> addSegments(IntSet segments) {
        // A segment's map is created on its first write: owning a segment costs nothing until then.
        running();
        return CompletableFutures.completedNull();
    }

    @Override
    public CompletionStage<Void> removeSegments(IntSet segments) {
        SegmentMaps m = running();
        return blocking.runBlocking(() -> {
            try {
                if (m.segmented()) {
                    m.existing(segments).forEach(map -> BatchWriter.removeAll(m.store(), map, null));
                } else {
                    removeBySegment(m, segments);
                }
            } catch (HtodException e) {
                throw failure("removing segments " + segments, e);
            }
        }, "htod-remove-segments");
    }

    /** A non-segmented store keeps all segments in one map: their keys are found by scanning it. */
    private void removeBySegment(SegmentMaps m, IntSet segments) {
        for (HtodMap<byte[], byte[]> map : m.existing(null)) {
            BatchWriter.removeAll(m.store(), map, k -> segments.contains(partitioner.getSegment(unmarshalKey(k))));
        }
    }

    @Override
    public CompletionStage<Void> clear() {
        SegmentMaps m = running();
        return blocking.runBlocking(() -> {
            try {
                m.existing(null).forEach(map -> BatchWriter.removeAll(m.store(), map, null));
            } catch (HtodException e) {
                throw failure("clearing", e);
            }
        }, "htod-clear");
    }

    /** Live entries of {@code segments}: reads every entry, to leave the expired ones out. */
    @Override
    public CompletionStage<Long> size(IntSet segments) {
        return Flowable.fromPublisher(publishEntries(segments, null, false)).count().toCompletionStage();
    }

    /**
     * Entries of {@code segments}, expired ones not yet purged included: the maps' counts, which
     * htod keeps in memory. On a blocking thread all the same: in log mode a count may first look
     * up, once, whether keys the log replayed after a crash were already in their table.
     */
    @Override
    public CompletionStage<Long> approximateSize(IntSet segments) {
        SegmentMaps m = running();
        return blocking.supplyBlocking(() -> {
            try {
                return m.count(segments);
            } catch (HtodException e) {
                throw failure("counting the entries of segments " + segments, e);
            }
        }, "htod-approximate-size");
    }

    @Override
    public Publisher<MarshallableEntry<K, V>> publishEntries(IntSet segments, Predicate<? super K> filter,
            boolean includeValues) {
        SegmentMaps m = running();
        return blocking.blockingPublisher(Flowable.defer(() -> {
            long now = time.wallClockTime();
            Predicate<? super K> keep = keyFilter(m, segments, filter);
            return translated(Flowable.fromIterable(m.existing(segments))
                    .concatMap(map -> Flowable.fromIterable(map.entrySet()))
                    .filter(e -> !EntryLayout.expired(e.getValue(), now))
                    .map(e -> decode(buffers.newByteBuffer(e.getKey()), e.getValue(), includeValues))
                    .filter(me -> keep == null || keep.test(me.getKey())), "reading the entries of segments " + segments);
        }));
    }

    @Override
    public Publisher<K> publishKeys(IntSet segments, Predicate<? super K> filter) {
        return Flowable.fromPublisher(publishEntries(segments, filter, false)).map(MarshallableEntry::getKey);
    }

    /** The caller's filter, and for a non-segmented store the segment test the maps cannot do. */
    private Predicate<? super K> keyFilter(SegmentMaps m, IntSet segments, Predicate<? super K> filter) {
        if (m.segmented() || segments == null) {
            return filter;
        }
        return k -> segments.contains(partitioner.getSegment(k)) && (filter == null || filter.test(k));
    }

    /**
     * Removes and publishes every entry dead at the time of subscription. Each is removed only if
     * its stored bytes are still those judged dead, so a write racing the purge is never lost.
     */
    @Override
    public Publisher<MarshallableEntry<K, V>> purgeExpired() {
        SegmentMaps m = running();
        return blocking.blockingPublisher(Flowable.defer(() -> {
            long now = time.wallClockTime();
            return translated(Flowable.fromIterable(m.existing(null))
                    .concatMap(map -> Flowable.fromIterable(map.entrySet())
                            .filter(e -> EntryLayout.expired(e.getValue(), now) && map.remove(e.getKey(), e.getValue()))
                            .map((Map.Entry<byte[], byte[]> e) -> decode(buffers.newByteBuffer(e.getKey()), e.getValue(),
                                    true))), "purging expired entries");
        }));
    }

    // ------------------------------------------------------------------ helpers

    private SegmentMaps running() {
        SegmentMaps m = maps;
        if (m == null) {
            throw new PersistenceException("the htod store " + (file == null ? "" : file + " ") + "is not started");
        }
        return m;
    }

    private MarshallableEntry<K, V> decode(Object key, byte[] stored, boolean includeValue) {
        try {
            return EntryLayout.decode(key, stored, includeValue, entries, buffers);
        } catch (EntryFormatException e) {
            throw new EntryFormatException(file + ": " + e.getMessage());
        }
    }

    /** The key as the persistence marshaller writes it: the same bytes as {@link MarshallableEntry#getKeyBytes()}. */
    private byte[] keyBytes(Object key) {
        try {
            return marshaller.objectToByteBuffer(key);
        } catch (IOException e) {
            throw new PersistenceException("cannot marshal a key for " + file + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PersistenceException("interrupted while marshalling a key for " + file, e);
        }
    }

    private Object unmarshalKey(byte[] k) {
        try {
            return marshaller.objectFromByteBuffer(k);
        } catch (IOException | ClassNotFoundException e) {
            throw new PersistenceException("cannot unmarshal a key of " + file + ": " + e, e);
        }
    }

    /**
     * htod's limits, checked before any I/O so that the caller gets the error, not a half-done
     * batch. In log mode an entry must fit one log record: an eighth of the log region, less a
     * key's room (about 8 MiB with the default log size); in direct mode 256 MiB.
     */
    private void checkSize(SegmentMaps m, byte[] k, byte[] v) {
        long maxValue = m.store().maxValueBytes();
        if (k.length > Htod.MAX_KEY_BYTES || v.length > maxValue) {
            throw new PersistenceException("htod store " + file + " takes keys of at most " + Htod.MAX_KEY_BYTES
                    + " bytes and entries of at most " + maxValue + " bytes" + (m.store().logged()
                            ? " (one log record; a larger log-size takes larger entries)" : "")
                    + "; this one has a key of " + k.length + " bytes and an entry of " + v.length);
        }
    }

    private static byte[] trimmed(org.infinispan.commons.io.ByteBuffer b) {
        return b.getOffset() == 0 && b.getLength() == b.getBuf().length ? b.getBuf() : b.trim();
    }

    private PersistenceException failure(String what, HtodException e) {
        return new PersistenceException("htod store " + file + ", " + what + ": " + e.getMessage(), e);
    }

    /** {@code f} with htod's errors as {@link #failure}s, as the single-entry methods throw them. */
    private <T> Flowable<T> translated(Flowable<T> f, String what) {
        return f.onErrorResumeNext(e -> Flowable.error(e instanceof HtodException h ? failure(what, h) : e));
    }
}
