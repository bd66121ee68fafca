package org.htod;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.alloc.HeapRecoveryReport;
import org.htod.core.alloc.HeapStats;
import org.htod.core.container.Superblock;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.storage.Storage;
import org.htod.mob.BufferedMap;
import org.htod.mob.LoggedOpen;
import org.htod.mob.WriteLayer;
import org.htod.table.HashtableOnDisk;
import org.htod.table.TableRecoveryReport;
import org.htod.table.TableStore;
import org.htod.table.TableVerifyReport;

/**
 * An open store: one file or device holding any number of named maps. Thread-safe. Close it to
 * shut down cleanly, which makes the next open fast (no recovery).
 *
 * <p>By default every change goes through the write layer: a record in the store's log, made
 * durable by group commit, and a state in a write buffer that reads look into first, installed
 * into the maps' tables by a background flusher (see {@code docs/WRITE-LAYER.md}). In direct
 * mode ({@link Htod.Builder#directMode}) changes go straight into the tables.
 */
public final class HtodStore implements AutoCloseable {
    private final TableStore tables;
    /** Log mode's write layer; null in direct mode. */
    private final WriteLayer layer;
    private final Durability durability;
    private final Clock clock;
    private final RecoveryReport report;
    private final ScheduledExecutorService syncer;
    private final CountingDevice device;
    private final OpMeter meter = new OpMeter();
    private volatile boolean closed;

    /** A store in log mode. */
    HtodStore(LoggedOpen.Opened opened, Durability durability, Clock clock, CountingDevice device) {
        this.device = device;
        this.layer = opened.layer();
        this.tables = null;
        this.durability = durability;
        this.clock = clock;
        this.syncer = null;
        this.report = report(opened);
    }

    private static RecoveryReport report(LoggedOpen.Opened o) {
        LoggedOpen.Facts f = o.facts();
        if (o.directRecovery() != null) {
            RecoveryReport direct = report(o.directRecovery());
            return new RecoveryReport(direct.clean(), direct.heapPath(), direct.heapTook(), direct.heapHeadersRead(),
                    direct.tablesTook(), direct.tables(), direct.entriesCounted(), direct.leakedBlocksFreed(),
                    direct.entriesRelinked(), 0, 0, 0, 0, direct.detail() + "; the log started at its first checkpoint");
        }
        String detail = (f.clean() ? "opened cleanly from the last checkpoint" : "after an unclean shutdown, from the"
                + " last checkpoint and the log: " + f.logBytesRead() + " bytes of log read, " + f.dataRecords()
                + " data records and " + f.installRecords() + " install records replayed (" + f.allocationsReplayed()
                + " allocations, " + f.freesReplayed() + " frees, " + f.linksRedone() + " links redone), " + f.keysBuffered()
                + " changes back in the write buffer; the log " + f.logEnd()) + ", in " + f.took().toMillis() + " ms";
        return new RecoveryReport(f.clean(), "log", f.took(), 0, Duration.ZERO, 0, 0, 0, 0, f.logBytesRead(),
                f.dataRecords(), f.installRecords(), f.keysBuffered(), detail);
    }

    /** A store in direct mode. */
    HtodStore(TableStore tables, Durability durability, Duration syncInterval, Clock clock, CountingDevice device) {
        this.device = device;
        this.tables = tables;
        this.layer = null;
        this.durability = durability;
        this.clock = clock;
        this.report = report(tables);
        if (durability == Durability.ASYNC) {
            syncer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "htod-sync " + tables.storage().heap().device().name());
                t.setDaemon(true);
                return t;
            });
            long ms = Math.max(1, syncInterval.toMillis());
            syncer.scheduleWithFixedDelay(this::backgroundSync, ms, ms, TimeUnit.MILLISECONDS);
        } else {
            syncer = null;
        }
    }

    private static RecoveryReport report(TableStore tables) {
        HeapRecoveryReport heap = tables.storage().recoveryReport();
        TableRecoveryReport t = tables.recovery();
        if (t == null) {
            return new RecoveryReport(true, heap.path(), heap.took(), heap.headersRead(), Duration.ZERO, 0, 0, 0,
                    0, 0, 0, 0, 0, "opened cleanly, heap " + heap);
        }
        return new RecoveryReport(false, heap.path(), heap.took(), heap.headersRead(), t.took(), t.tables(),
                t.entries(), t.leakedBlocksFreed(), t.entriesRelinked(), 0, 0, 0, 0, "after an unclean shutdown: heap "
                        + heap + "; " + t);
    }

    private void backgroundSync() {
        if (closed) {
            return;
        }
        try {
            tables.sync();
        } catch (StoreClosedException e) {
            // closing raced with this tick; close syncs itself
        }
    }

    /**
     * The map called {@code name}, created empty if the store has none. A map is kept by name
     * only, as bytes: reading it with other codecs than it was written with is the caller's error.
     * Several views of one map, even with different codecs, share its table and its locks.
     */
    public <K, V> HtodMap<K, V> map(String name, Codec<K> keyCodec, Codec<V> valueCodec) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(keyCodec, "keyCodec");
        Objects.requireNonNull(valueCodec, "valueCodec");
        ensureOpen();
        int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (nameBytes > Htod.MAX_KEY_BYTES) {
            throw new EntryTooLargeException("a map name takes at most " + Htod.MAX_KEY_BYTES + " bytes in UTF-8, found "
                    + nameBytes);
        }
        if (layer != null) {
            BufferedMap m = layer.map(name, true);
            MeteredTable metered = new MeteredTable(m, m, meter);
            return new HtodMap<>(name, metered, metered, m, keyCodec, valueCodec, clock::millis, this);
        }
        HashtableOnDisk t = tables.table(name, true);
        MeteredTable metered = new MeteredTable(t, t, meter);
        return new HtodMap<>(name, metered, metered, t, keyCodec, valueCodec, clock::millis, this);
    }

    /** Names of the maps in this store. */
    public List<String> mapNames() {
        ensureOpen();
        return layer != null ? layer.mapNames() : tables.names();
    }

    /** Makes every write so far durable. */
    public void sync() {
        ensureOpen();
        if (layer != null) {
            layer.sync();
        } else {
            tables.sync();
        }
    }

    /**
     * A new batch: puts and removes over maps of this store that {@link WriteBatch#commit} makes
     * visible and durable (as the store's durability says) together; after a crash either all of
     * them are there, or none. Needs the log: a store in direct mode refuses.
     */
    public WriteBatch batch() {
        ensureOpen();
        if (layer == null) {
            throw new UnsupportedOperationException("atomic batches need the log; " + this + " was opened in direct mode");
        }
        return new WriteBatch(this, layer);
    }

    /**
     * Installs every buffered change into the tables and takes a checkpoint, so that a reopen
     * after a crash has little log to replay. The write layer does this by itself as the log
     * fills; call it before a planned stop that may not close cleanly. No effect in direct mode.
     */
    public void checkpoint() {
        ensureOpen();
        if (layer != null) {
            layer.checkpointNow();
        }
    }

    /**
     * Largest value, in encoded bytes, under a key of any size: {@link Htod#MAX_VALUE_BYTES}, or in
     * log mode what one log record holds beside a key of {@link Htod#MAX_KEY_BYTES} (0 if the log
     * is too small for that). Smaller keys leave room for larger values.
     */
    public long maxValueBytes() {
        return Math.max(0, maxValueBytes(Htod.MAX_KEY_BYTES));
    }

    /** Largest value under a key of {@code keyBytes}: in log mode key and value share one log record. */
    long maxValueBytes(int keyBytes) {
        return layer == null ? Htod.MAX_VALUE_BYTES : Math.min(Htod.MAX_VALUE_BYTES, layer.maxBatchBytes() - 64 - keyBytes);
    }

    /** Whether this store writes through the log (the default) rather than directly. */
    public boolean logged() {
        return layer != null;
    }

    public Durability durability() {
        return durability;
    }

    /** What opening took and found. */
    public RecoveryReport recoveryReport() {
        return report;
    }

    /**
     * Reads the whole store and checks it against its invariants: every checksum, every chain,
     * every map's count, and every allocated block reached by some map. Writers wait while a map
     * is checked; readers do not.
     */
    public VerifyReport verify() {
        return verify(Progress.NONE);
    }

    /**
     * {@link #verify()}, telling {@code progress} of the blocks checked so far, of an estimate of
     * the total: each block header the heap's check reads, then each block a map's walk reaches
     * and each allocated block the sweep for leaks visits.
     */
    public VerifyReport verify(Progress progress) {
        Objects.requireNonNull(progress, "progress");
        ensureOpen();
        try {
            TableVerifyReport r = layer != null ? layer.verify(progress::step)
                    : tables.verify(true, h -> false, progress::step);
            return new VerifyReport(r.tables(), r.entries(), r.reachedBlocks(), r.allocatedBlocks(), List.of());
        } catch (CorruptStoreException e) {
            return new VerifyReport(0, 0, 0, 0, List.of(new VerifyReport.Problem(e.offset(), e.getMessage())));
        }
    }

    /**
     * A snapshot of the store's figures (see {@link StoreStats}): cheap enough to poll, but it
     * reads each map's size, which in log mode waits for an install under way. Writers are not
     * stopped: each figure is exact when read, the set not taken at one instant.
     */
    public StoreStats stats() {
        ensureOpen();
        Storage storage = storage();
        Superblock sb = storage.superblock();
        HeapStats heap = storage.heap().stats();
        StoreStats.Layout layout = new StoreStats.Layout(device.name(), Superblock.FORMAT_VERSION,
                sb.storageMethod().name(), logged(), durability, sb.grain(), sb.maxQuickList(), sb.acceptableWaste(),
                sb.obaThreshold(), sb.logSize(), sb.heapOffset(), sb.heapCapacity(), sb.sectorSize(), sb.createdMillis());
        java.util.Map<String, Long> entries = new java.util.TreeMap<>();
        for (String name : mapNames()) {
            entries.put(name, layer != null ? layer.map(name, false).size() : tables.table(name, false).size());
        }
        StoreStats.Space space = new StoreStats.Space(device.size(), heap.usedBytes(), heap.capacityBytes(),
                heap.highWaterBytes(), heap.allocatedBlocks(), heap.allocatedBytes(), heap.requestedBytes(),
                heap.freeBlocks(), heap.freeBytes());
        StoreStats.Fragmentation frag = new StoreStats.Fragmentation(heap.internalFragmentation(),
                heap.externalFragmentation(), heap.totalFragmentation());
        StoreStats.WriteLayerFigures wl = null;
        if (layer != null) {
            WriteLayer.Figures f = layer.figures();
            wl = new StoreStats.WriteLayerFigures(f.groupCommits(), f.recordsCommitted(),
                    ratio(f.recordsCommitted(), f.groupCommits()), f.bufferBytes(), f.bufferCapacity(),
                    ratio(f.bufferBytes(), f.bufferCapacity()), f.bufferedKeys(), f.changesBuffered(),
                    f.changesAbsorbed(), ratio(f.changesAbsorbed(), f.changesBuffered()), f.installs(),
                    f.installedKeys(), f.checkpoints(), f.doublingSteps(), f.logUsedBytes(), f.logRegionBytes());
        }
        long[] c = tableStore().cacheCounts();
        StoreStats.Cache cache = new StoreStats.Cache(c[0], c[1], ratio(c[0], c[0] + c[1]));
        IoCounts io = device.counts();
        StoreStats.DeviceIo dio = new StoreStats.DeviceIo(io.reads(), io.writes(), io.bytesRead(), io.bytesWritten(),
                io.syncs());
        return new StoreStats(layout, meter.counts(), entries, space, frag, dio, wl, cache, report);
    }

    /**
     * Writes a consistent copy of this open store to the new file {@code target}, while writers go
     * on: every entry of every map as of one instant (a prefix of the changes the store took),
     * rewritten into a fresh store laid out like this one, with batch allocation, so that the copy
     * is also compacted. The copy is written under a temporary name beside {@code target}, closed
     * cleanly, verified, and renamed into place; on any failure (the disk full) {@code target} is
     * left absent and this store untouched.
     *
     * <p>While it runs, the write layer installs nothing: writers go on until the write buffer is
     * full, then wait for the copy to end; a map's size waits for it too. Needs the log: a store
     * in direct mode refuses, as no instant holds all its maps still (close it and use {@link
     * Htod#compact}, or copy the closed file).
     *
     * @throws HtodException if {@code target} exists, or the copy cannot be written
     */
    public CopyReport copyTo(java.nio.file.Path target, Progress progress) {
        return copyTo(target, progress, StoreOps.FILES);
    }

    /** {@link #copyTo(java.nio.file.Path, Progress)}, writing the copy's file as {@code files} opens it. */
    CopyReport copyTo(java.nio.file.Path target, Progress progress,
            java.util.function.Function<java.nio.file.Path, org.htod.core.device.BlockDevice> files) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(progress, "progress");
        ensureOpen();
        if (layer == null) {
            throw new UnsupportedOperationException("a consistent copy of an open store needs the log; " + this
                    + " was opened in direct mode");
        }
        StoreOps.refuseExisting(target);
        java.nio.file.Path tmp = StoreOps.temporary(target);
        try {
            long[] n = StoreOps.copyInto(this, tmp, progress, true, files);
            StoreOps.publish(tmp, target, false);
            return new CopyReport(target, (int) n[1], n[0], device.size(), StoreOps.size(target), "snapshot", 0, -1, null);
        } catch (RuntimeException e) {
            StoreOps.deleteQuietly(tmp, e);
            throw e;
        }
    }

    /**
     * The entries of map {@code map} with their expiry and version, streamed from disk (weakly
     * consistent, as the map's own iterators; expired entries left out).
     *
     * @throws IllegalArgumentException if the store has no such map
     */
    public java.util.Iterator<StoreEntry> entries(String map) {
        ensureOpen();
        org.htod.table.TableReader r = layer != null ? layer.map(map, false) : tables.table(map, false);
        if (r == null) {
            throw new IllegalArgumentException(this + " has no map '" + map + "'");
        }
        java.util.Iterator<org.htod.table.StoredEntry> it = r.iterator(true);
        long now = clock.millis();
        return new java.util.Iterator<>() {
            private StoreEntry next = advance();

            private StoreEntry advance() {
                while (it.hasNext()) {
                    org.htod.table.StoredEntry e = it.next();
                    if (!e.expiredAt(now)) {
                        return new StoreEntry(map, e.key(), e.value(), e.expiry(), e.version());
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public StoreEntry next() {
                if (next == null) {
                    throw new java.util.NoSuchElementException();
                }
                StoreEntry e = next;
                next = advance();
                return e;
            }
        };
    }

    /**
     * Writes {@code entry} into its map (created if absent) as it is: its bytes, its expiry, and
     * its version if above 0 (else the map's usual versioning). What an import does.
     */
    public void load(StoreEntry entry) {
        Objects.requireNonNull(entry, "entry");
        HtodMap<byte[], byte[]> m = map(entry.map(), Codec.bytes(), Codec.bytes());
        byte[] k = m.keyBytes(entry.key());
        byte[] v = m.valueBytes(k, entry.value());
        long meterStart = meter.start();
        m.writer().update(k, cur -> entry.version() > 0 ? org.htod.table.Change.put(v, entry.expiresAt(), entry.version())
                : org.htod.table.Change.put(v, entry.expiresAt()));
        meter.done(OpMeter.Op.PUT, 1, meterStart);
    }

    /**
     * Hands {@code sink} every entry of every map: in log mode a consistent view ({@link
     * WriteLayer#copyFrozen}); in direct mode a walk of each map, consistent only if nothing
     * writes ({@code frozen} refuses it).
     */
    void copyEntries(boolean frozen, java.util.function.LongConsumer total,
            java.util.function.BiConsumer<String, org.htod.table.StoredEntry> sink) {
        ensureOpen();
        if (layer != null) {
            layer.copyFrozen(total, sink);
            return;
        }
        if (frozen) {
            throw new UnsupportedOperationException("a consistent copy of an open store needs the log");
        }
        List<String> names = new java.util.ArrayList<>(tables.names());
        java.util.Collections.sort(names);
        long n = 0;
        for (String name : names) {
            n += tables.table(name, false).size();
        }
        total.accept(n);
        for (String name : names) {
            for (java.util.Iterator<org.htod.table.StoredEntry> it = tables.table(name, false).iterator(true); it.hasNext();) {
                sink.accept(name, it.next());
            }
        }
    }

    private static double ratio(long a, long b) {
        return b == 0 ? 0 : (double) a / b;
    }

    /** The device, counting its I/O. */
    CountingDevice device() {
        return device;
    }

    /** The counters of the maps' operations. */
    OpMeter meter() {
        return meter;
    }

    /** The storage under the tables, in either mode. */
    Storage storage() {
        return layer != null ? layer.storage() : tables.storage();
    }

    /** The tables, in either mode (under the write layer in log mode). */
    TableStore tableStore() {
        return layer != null ? layer.tables() : tables;
    }

    /** Log mode's write layer, for tests that count what it does; null in direct mode. */
    WriteLayer layer() {
        return layer;
    }

    /** The tables: direct mode's, or those under the write layer. */
    TableStore tables() {
        return tables;
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException("the store is closed");
        }
    }

    /** Clean shutdown: waits for running operations, syncs, records the state for a fast reopen. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (layer != null) {
            try {
                layer.close();
            } catch (HtodException e) {
                if (!layer.isClosed()) {
                    synchronized (this) {
                        closed = false; // the layer stays open: close may be called again
                    }
                }
                throw e;
            }
            return;
        }
        if (syncer != null) {
            syncer.shutdown();
            try {
                syncer.awaitTermination(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HtodException("interrupted while stopping the background sync", e);
            }
        }
        tables.close();
    }

    @Override
    public String toString() {
        return "HtodStore[" + (layer != null ? layer.deviceName() + ", log" : tables.storage().heap().device().name()
                + ", direct") + ", " + durability + "]";
    }
}
