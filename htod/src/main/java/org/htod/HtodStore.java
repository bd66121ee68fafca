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
 *
 * <p>Interrupts: a thread interrupted during an operation keeps its interrupt, and the store
 * stays open for every thread (the devices keep interrupts off their channels). A write's wait
 * for its group commit or its sync goes on through an interrupt (the change is made already) and
 * returns as usual; a wait before anything is written, for room in the write buffer or the log,
 * ends with {@link org.htod.core.HtodException} saying so, nothing written.
 *
 * <p>Every operation passes the store's gate ({@link StoreGate}), which {@link #compact} and
 * {@link #close} take exclusively. Locks, outermost first: the gate; then the write layer's (see
 * {@code WriteLayer}) or the tables'. An online compaction also holds its own monitor, outside
 * the gate, so that one runs at a time.
 */
public final class HtodStore implements AutoCloseable {
    private final TableStore tables;
    /**
     * Log mode's write layer; null in direct mode. Replaced by an online compaction, under the
     * gate held exclusively: an operation reads it once, inside the gate.
     */
    private volatile WriteLayer layer;
    private final boolean logMode;
    private final Durability durability;
    private final Clock clock;
    private final RecoveryReport report;
    private final ScheduledExecutorService syncer;
    /** The device, counting its I/O; replaced (its counts restarting) by an online compaction. */
    private volatile CountingDevice device;
    private final OpMeter meter = new OpMeter();
    private volatile boolean closed;
    /** Run once the store has closed (see {@link #onClose}). */
    private final List<Runnable> closeHooks = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Opened read-only ({@code Htod.Builder.readOnly}): set once, before the store is handed out. */
    private volatile boolean readOnly;
    /** Every operation passes it; an online compaction holds it exclusively to swap the file. */
    private final StoreGate gate = new StoreGate();
    /** Per map name, the map a caller's {@link HtodMap} writes to now (log mode). */
    private final java.util.Map<String, MapHandle> handles = new java.util.concurrent.ConcurrentHashMap<>();
    /** How to open this store's file again, for an online compaction; null if not opened on a path. */
    private final Reopen reopen;
    /** One online compaction at a time. */
    private final Object compacting = new Object();
    /**
     * While an online compaction runs: the maps and keys written since it began or since its last
     * round of carrying over (a key of null: the whole map, after a clear); null otherwise.
     * Replaced under the gate held exclusively (dropped without it after a failure).
     */
    private volatile java.util.Set<Written> written;
    /** Counts the swaps of the file: an iterator opened before one ends. */
    private volatile long generation;
    /** Why the store was lost by a compaction whose new file could not be opened, or null. */
    private volatile HtodException lost;
    /**
     * Direct mode at ASYNC: the error of the last background sync, until a sync succeeds; null
     * while they do. Writers read it ({@link #beforeWrite}); set and cleared by any sync.
     */
    private volatile HtodException backgroundFailure;
    /**
     * Per thread: how many functions given to compute or merge on this store's maps it is in
     * (see {@link #refuseInFunction}).
     */
    private final ThreadLocal<int[]> functions = ThreadLocal.withInitial(() -> new int[1]);

    /** Opens the file of a log-mode store again, with the options it was opened with (its reads mapped or not). */
    record Reopen(java.nio.file.Path path, boolean mapReads,
            java.util.function.Function<org.htod.core.device.BlockDevice, LoggedOpen.Opened> open) {}

    /** A map's current target: repointed to the new file's map by an online compaction. */
    static final class MapHandle {
        final String name;
        volatile BufferedMap target;

        MapHandle(String name, BufferedMap target) {
            this.name = name;
            this.target = target;
        }
    }

    /** A write an online compaction carries over: a key of a map, or (key null) all of it. */
    private record Written(String map, java.nio.ByteBuffer key) {}

    /** A store in log mode. */
    HtodStore(LoggedOpen.Opened opened, Durability durability, Clock clock, CountingDevice device, Reopen reopen) {
        this.device = device;
        this.layer = opened.layer();
        this.logMode = true;
        this.tables = null;
        this.durability = durability;
        this.clock = clock;
        this.syncer = null;
        this.report = report(opened);
        this.reopen = reopen;
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
                + " changes back in the write buffer" + (f.placedValuesRead() == 0 ? "" : " (" + f.placedValuesRead()
                + " of their values read from the blocks their writers placed them in, " + f.placedBytesRead() + " bytes)")
                + "; the log " + f.logEnd()) + ", in " + f.took().toMillis() + " ms";
        return new RecoveryReport(f.clean(), "log", f.took(), 0, Duration.ZERO, 0, 0, 0, 0, f.logBytesRead(),
                f.dataRecords(), f.installRecords(), f.keysBuffered(), detail);
    }

    /**
     * A store in direct mode; {@code readOnly} ({@code Htod.Builder.readOnly}): no background sync,
     * as there is nothing to make durable (at ASYNC one ran at every interval all the same).
     */
    HtodStore(TableStore tables, Durability durability, Duration syncInterval, Clock clock, CountingDevice device,
            boolean readOnly) {
        this.readOnly = readOnly;
        this.device = device;
        this.tables = tables;
        this.layer = null;
        this.logMode = false;
        this.reopen = null;
        this.durability = durability;
        this.clock = clock;
        this.report = report(tables);
        if (durability == Durability.ASYNC && !readOnly) {
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
            backgroundFailure = null;
        } catch (StoreClosedException e) {
            // closing raced with this tick; close syncs itself
        } catch (RuntimeException e) {
            // Kept for the writers, and tried again at the next tick: thrown out of this task, it
            // would end the schedule and every later background sync with it, while writes went
            // on being acknowledged. A failed flush keeps its links for the next one.
            backgroundFailure = e instanceof HtodException h ? h : new HtodException("background sync failed", e);
        }
    }

    /**
     * Inside the gate, before a write. Direct mode at ASYNC, after a background sync failed and
     * none has succeeded since: syncs first, and if that fails too, refuses the write, unmade. A
     * write acknowledged then would wait for a sync that may never come (a removal writes nothing
     * itself), where the interval promises one.
     */
    void beforeWrite() {
        refuseInFunction("write to the store");
        refuseIfReadOnly("write to it");
        if (backgroundFailure == null) {
            return;
        }
        try {
            tables.sync();
            backgroundFailure = null;
        } catch (HtodException e) {
            backgroundFailure = e;
            throw new HtodException("the background sync of " + tables.storage().heap().device().name()
                    + " failed and a sync now failed too, so this write was not made: " + e.getMessage(), e);
        }
    }

    /** The store's clock now, in epoch milliseconds: what its expiry is judged by. */
    long now() {
        return clock.millis();
    }

    /** The store's clock: a store made from this one (a compaction's) judges expiry by it too. */
    java.time.Clock clock() {
        return clock;
    }

    /** Whether the store is closed (a close that failed and left it open has not closed it). */
    boolean isClosed() {
        return closed;
    }

    /** Marks the store read-only: see {@code Htod.Builder.readOnly}. */
    void markReadOnly() {
        readOnly = true;
    }

    /** Whether the store was opened read-only ({@code Htod.Builder.readOnly}). */
    public boolean isReadOnly() {
        return readOnly;
    }

    /** Refuses {@code what} (a change) if the store was opened read-only. */
    void refuseIfReadOnly(String what) {
        if (readOnly) {
            throw new ReadOnlyStoreException(this + " was opened read-only: it cannot " + what);
        }
    }

    /**
     * Runs {@code f}, a change's decision (a function given to compute or merge, the map's codecs
     * run to decide or encode it), marked as such for {@link #refuseInFunction}.
     */
    <T> T runFunction(java.util.function.Supplier<T> f) {
        int[] depth = functions.get();
        depth[0]++;
        try {
            return f.get();
        } finally {
            depth[0]--;
        }
    }

    /**
     * Refuses {@code what} (a write, a sync, a batch...) from inside a function given to compute
     * or merge, or a codec run while a change is decided (the stored value decoded for a compute
     * function, the new value encoded). Such a function runs holding its key's lock, and in log
     * mode the append guard; the flusher takes that lock to install the key, and a checkpoint, a
     * heal of the log and a copy wait for the guard. A write from inside it waits for the flusher
     * once the buffer or the log is full, and so did, for good (writes of another map were let
     * through before, and hung so); a sync may wait for a heal, and a copy for the guard. Refused
     * always rather than hung sometimes, in both modes, so that code written against one does not
     * hang in the other.
     */
    void refuseInFunction(String what) {
        if (inFunction()) {
            throw new IllegalStateException("a function given to compute or merge, or a codec run during a change,"
                    + " must not " + what + " (it runs holding its key's lock, which the store's writes, syncs and"
                    + " copies may wait for); read in it, and write after it returns");
        }
    }

    /** Whether the calling thread runs a function given to compute or merge on this store's maps. */
    private boolean inFunction() {
        return functions.get()[0] > 0;
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
        int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (nameBytes > Htod.MAX_KEY_BYTES) {
            throw new EntryTooLargeException("a map name takes at most " + Htod.MAX_KEY_BYTES + " bytes in UTF-8, found "
                    + nameBytes);
        }
        enter();
        try {
            WriteLayer l = layer;
            boolean inFunction = inFunction();
            if (l != null) {
                BufferedMap m = l.map(name, !inFunction && !readOnly);
                if (m == null) {
                    refuseInFunction("create a map ('" + name + "')");
                    refuseIfReadOnly("create a map ('" + name + "'), which it does not hold");
                }
                MapHandle h = handles.computeIfAbsent(name, n -> new MapHandle(n, m));
                MeteredTable metered = new MeteredTable(name, h, null, null, meter, this);
                return new HtodMap<>(name, metered, h, keyCodec, valueCodec, clock::millis, this);
            }
            HashtableOnDisk t = tables.table(name, !inFunction && !readOnly);
            if (t == null) {
                refuseInFunction("create a map ('" + name + "')");
                refuseIfReadOnly("create a map ('" + name + "'), which it does not hold");
            }
            MeteredTable metered = new MeteredTable(name, null, t, t, meter, this);
            return new HtodMap<>(name, metered, null, keyCodec, valueCodec, clock::millis, this);
        } finally {
            exit();
        }
    }

    /** Names of the maps in this store. */
    public List<String> mapNames() {
        enter();
        try {
            WriteLayer l = layer;
            return l != null ? l.mapNames() : tables.names();
        } finally {
            exit();
        }
    }

    /** Makes every write so far durable. */
    public void sync() {
        refuseInFunction("sync the store");
        enter();
        try {
            WriteLayer l = layer;
            if (l != null) {
                l.sync();
            } else {
                tables.sync();
                backgroundFailure = null;
            }
        } finally {
            exit();
        }
    }

    /**
     * A new batch: puts and removes over maps of this store that {@link WriteBatch#commit} makes
     * visible and durable (as the store's durability says) together; after a crash either all of
     * them are there, or none. Needs the log: a store in direct mode refuses.
     */
    public WriteBatch batch() {
        ensureOpen();
        if (!logMode) {
            throw new UnsupportedOperationException("atomic batches need the log; " + this + " was opened in direct mode");
        }
        return new WriteBatch(this);
    }

    /**
     * Installs every buffered change into the tables and takes a checkpoint, so that a reopen
     * after a crash has little log to replay. The write layer does this by itself as the log
     * fills; call it before a planned stop that may not close cleanly. No effect in direct mode.
     */
    public void checkpoint() {
        refuseInFunction("checkpoint the store");
        enter();
        try {
            WriteLayer l = layer;
            if (l != null) {
                l.checkpointNow();
            }
        } finally {
            exit();
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
        WriteLayer l = layer;
        return l == null ? Htod.MAX_VALUE_BYTES : Math.min(Htod.MAX_VALUE_BYTES, l.maxBatchBytes() - 64 - keyBytes);
    }

    /** Most bytes a {@link WriteBatch} may take: one log record. */
    long maxBatchBytes() {
        return layer.maxBatchBytes();
    }

    /** Whether this store writes through the log (the default) rather than directly. */
    public boolean logged() {
        return logMode;
    }

    public Durability durability() {
        return durability;
    }

    /**
     * Why this store takes no more changes until it is closed and opened again, or empty while it
     * takes them: the failure it latched when going on could lose or misplace data. That is a
     * sync the device refused after a failed one (a file refuses every sync after a failed one,
     * since the writes it was to make durable may be lost: {@link
     * org.htod.core.DeviceFailedException}), damage the flusher met installing the write buffer,
     * a device error in the middle of a change of the heap, or an online compaction that could not
     * open its new file. Every change is refused from then on, with an exception caused by this
     * one, and reads go on (but after that compaction, which closed the store); {@link #close()}
     * closes the store without a clean shutdown, and the next open recovers from what the disk
     * holds.
     *
     * <p>A failure the store gets over by itself is not one: a full disk (writes fail with {@link
     * org.htod.core.StoreFullException} and go on once there is room), or a log write or sync
     * that failed once, which the next change heals if the device permits (the device's answer
     * then may latch the failure). Reads no I/O and takes no lock: for health checks, such as a
     * cache's test of whether its store is available.
     */
    public java.util.Optional<HtodException> failure() {
        HtodException why = lost;
        if (why == null) {
            WriteLayer l = layer;
            why = l != null ? l.failure() : tables.storage().heap().failure();
        }
        return java.util.Optional.ofNullable(why);
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
        refuseInFunction("verify the store");
        enter();
        try {
            WriteLayer l = layer;
            TableVerifyReport r = l != null ? l.verify(progress::step)
                    : tables.verify(true, h -> false, progress::step);
            return new VerifyReport(r.tables(), r.entries(), r.reachedBlocks(), r.allocatedBlocks(), List.of());
        } catch (CorruptStoreException e) {
            return new VerifyReport(0, 0, 0, 0, List.of(new VerifyReport.Problem(e.offset(), e.getMessage())));
        } finally {
            exit();
        }
    }

    /**
     * A snapshot of the store's figures (see {@link StoreStats}): cheap enough to poll, but it
     * reads each map's size, which in log mode waits for an install under way. Writers are not
     * stopped: each figure is exact when read, the set not taken at one instant.
     */
    public StoreStats stats() {
        enter();
        try {
            return statsNow();
        } finally {
            exit();
        }
    }

    private StoreStats statsNow() {
        WriteLayer layer = this.layer;
        CountingDevice device = this.device;
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
                    f.installedKeys(), f.checkpoints(), f.doublingSteps(), f.logUsedBytes(), f.logRegionBytes(),
                    f.bufferWaits(), f.bufferWaitNanos() / 1e9, f.logWaits(), f.logWaitNanos() / 1e9, f.installReads(),
                    f.installReadsCached(), f.flusherBusyNanos() / 1e9);
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
        if (!logMode) {
            throw new UnsupportedOperationException("a consistent copy of an open store needs the log; " + this
                    + " was opened in direct mode");
        }
        refuseInFunction("copy the store");
        enter(); // the whole copy: an online compaction waits for it
        try {
            StoreOps.refuseExisting(target);
            java.nio.file.Path tmp = org.htod.core.device.FileNames.temporary(target);
            try {
                long[] n = StoreOps.copyInto(this, tmp, progress, true, files);
                StoreOps.publish(tmp, target, false);
                return new CopyReport(target, (int) n[1], n[0], device.size(), StoreOps.size(target), "snapshot", 0, -1,
                        null);
            } catch (RuntimeException e) {
                StoreOps.deleteQuietly(tmp, e);
                throw e;
            }
        } finally {
            exit();
        }
    }

    /**
     * Compacts this open store in place, while other threads go on reading and writing it: writes
     * every live entry of every map as of one instant into a new file beside it, with batch
     * allocation (as {@link #copyTo} does), closes that cleanly and verifies it; then, with every
     * operation held off at the store's gate, writes into it the changes made since that instant,
     * closes this store's file cleanly, renames the new file over it (atomically, the directory
     * synced) and opens it with the options this store was opened with. No acknowledged write is
     * lost. The maps callers hold ({@link HtodMap}) and their batches keep working: they are
     * repointed to the new file.
     *
     * <p>Operations wait at the gate twice: an instant at the start, and, at the end, for as long
     * as writing the changes made during the copy, closing both files and opening the new one
     * takes. Iterators (of a map, its views, or {@link #entries}) opened before the swap throw
     * {@link StoreClosedException} when used after it. The device's I/O counts ({@link #stats()},
     * {@link HtodMetrics}) start again from zero with the new file; the operation counts go on.
     *
     * <p>If anything fails before the rename (the disk full, say), the new file is removed and
     * this store stays in service as it was. If the new file, once renamed into place, cannot be
     * opened, the store is lost to this process: every operation throws {@link
     * StoreClosedException} naming the failure, and the file is opened again as any store is.
     *
     * <p>Needs the log and a store opened on a path ({@link Htod#builder(java.nio.file.Path)}): a
     * store in direct mode, or on a device given to the builder, refuses with {@link
     * UnsupportedOperationException} (close it and use {@link Htod#compact}).
     *
     * @return what was written: the file's size before and after, the entries and maps
     */
    public CopyReport compact(Progress progress) {
        return compact(progress, StoreOps.FILES);
    }

    /** {@link #compact(Progress)}, writing the new file as {@code files} opens it. */
    CopyReport compact(Progress progress,
            java.util.function.Function<java.nio.file.Path, org.htod.core.device.BlockDevice> files) {
        Objects.requireNonNull(progress, "progress");
        refuseIfReadOnly("be compacted");
        if (!logMode) {
            throw new UnsupportedOperationException("online compaction needs the log; " + this
                    + " was opened in direct mode (close it and use Htod.compact)");
        }
        if (reopen == null) {
            throw new UnsupportedOperationException("online compaction needs a store opened on a path; " + this
                    + " was opened on a device");
        }
        if (gate.inside()) {
            throw new IllegalStateException("compact cannot run inside an operation of the store");
        }
        synchronized (compacting) {
            ensureOpen();
            return OnlineCompaction.run(this, reopen.path(), progress, files);
        }
    }

    /**
     * The entries of map {@code map} with their expiry and version, streamed from disk (weakly
     * consistent, as the map's own iterators; expired entries left out).
     *
     * @throws IllegalArgumentException if the store has no such map
     */
    public java.util.Iterator<StoreEntry> entries(String map) {
        java.util.Iterator<org.htod.table.StoredEntry> it;
        enter();
        try {
            WriteLayer l = layer;
            org.htod.table.TableReader r = l != null ? l.map(map, false) : tables.table(map, false);
            if (r == null) {
                throw new IllegalArgumentException(this + " has no map '" + map + "'");
            }
            it = guarded(r.iterator(true));
        } finally {
            exit();
        }
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
        // metered (as a put) and passing the gate, as any write of the map
        m.writer().update(k, cur -> entry.version() > 0 ? org.htod.table.Change.put(v, entry.expiresAt(), entry.version())
                : org.htod.table.Change.put(v, entry.expiresAt()));
    }

    /**
     * Hands {@code sink} every entry of every map: in log mode a consistent view ({@link
     * WriteLayer#copyFrozen}); in direct mode a walk of each map, consistent only if nothing
     * writes ({@code frozen} refuses it).
     */
    void copyEntries(boolean frozen, java.util.function.LongConsumer total,
            java.util.function.BiConsumer<String, org.htod.table.StoredEntry> sink) {
        ensureOpen();
        WriteLayer l = layer;
        if (l != null) {
            l.copyFrozen(total, sink);
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
        WriteLayer l = layer;
        return l != null ? l.storage() : tables.storage();
    }

    /** The tables, in either mode (under the write layer in log mode). */
    TableStore tableStore() {
        WriteLayer l = layer;
        return l != null ? l.tables() : tables;
    }

    /** Log mode's write layer, for tests that count what it does; null in direct mode. */
    WriteLayer layer() {
        return layer;
    }

    /** The tables: direct mode's, or those under the write layer. */
    TableStore tables() {
        return tables;
    }

    void ensureOpen() {
        if (closed) {
            HtodException why = lost;
            if (why != null) {
                StoreClosedException e = new StoreClosedException("the store is closed: " + why.getMessage());
                e.initCause(why);
                throw e;
            }
            throw new StoreClosedException("the store is closed");
        }
    }

    /** Passes the store's gate for one operation (see {@link StoreGate}); pair with {@link #exit}. */
    void enter() {
        gate.enter();
        if (closed) {
            gate.exit();
            ensureOpen();
        }
    }

    void exit() {
        gate.exit();
    }

    /** How to open this store's file again; null if it was not opened on a path. */
    Reopen reopen() {
        return reopen;
    }

    /** The gate, for the online compaction. */
    StoreGate gate() {
        return gate;
    }

    /** Called inside the gate before a write of {@code key} (null: every key) of map {@code map}. */
    void written(String map, byte[] key) {
        java.util.Set<Written> w = written;
        if (w != null) {
            w.add(new Written(map, key == null ? null : java.nio.ByteBuffer.wrap(key.clone())));
        }
    }

    /** Starts (a new set) or stops (null) recording writes; under the gate held exclusively. */
    void recordWrites(boolean on) {
        written = on ? java.util.concurrent.ConcurrentHashMap.newKeySet() : null;
    }

    /**
     * What was written since recording started, as map names and keys (a key of null: the whole
     * map); under the gate held exclusively.
     */
    java.util.List<java.util.Map.Entry<String, byte[]>> writtenKeys() {
        return keys(written);
    }

    /**
     * {@link #writtenKeys()}, and recording starts again into a new set; under the gate held
     * exclusively, so that every write recorded in the set taken has completed.
     */
    java.util.List<java.util.Map.Entry<String, byte[]>> takeWrittenKeys() {
        java.util.Set<Written> w = written;
        recordWrites(true);
        return keys(w);
    }

    private static java.util.List<java.util.Map.Entry<String, byte[]>> keys(java.util.Set<Written> w) {
        java.util.List<java.util.Map.Entry<String, byte[]>> out = new java.util.ArrayList<>();
        if (w != null) {
            for (Written x : w) {
                out.add(new java.util.AbstractMap.SimpleImmutableEntry<>(x.map(),
                        x.key() == null ? null : x.key().array()));
            }
        }
        return out;
    }

    /** The handles of the maps callers were given. */
    java.util.Collection<MapHandle> handles() {
        return handles.values();
    }

    /** Swaps in the newly opened file; under the gate held exclusively. */
    void swapped(WriteLayer l, CountingDevice d) {
        for (MapHandle h : handles.values()) {
            h.target = l.map(h.name, true);
        }
        this.device = d;
        this.layer = l;
        generation++;
    }

    /** The store is lost: its new file could not be opened after the rename; under the gate held exclusively. */
    void lost(HtodException why) {
        lost = why;
        closed = true;
    }

    /** An iterator that passes the gate at each step, and ends if the file is swapped meanwhile. */
    <T> java.util.Iterator<T> guarded(java.util.Iterator<T> it) {
        long gen = generation;
        return new java.util.Iterator<>() {
            private void check() {
                if (generation != gen) {
                    throw new StoreClosedException("the store's file was replaced by an online compaction after this"
                            + " iterator was opened");
                }
            }

            @Override
            public boolean hasNext() {
                enter();
                try {
                    check();
                    return it.hasNext();
                } finally {
                    exit();
                }
            }

            @Override
            public T next() {
                enter();
                try {
                    check();
                    return it.next();
                } finally {
                    exit();
                }
            }
        };
    }

    /**
     * Clean shutdown: waits for running operations (and for an online compaction's swap), syncs,
     * records the state for a fast reopen.
     */
    @Override
    public void close() {
        if (gate.inside()) {
            throw new IllegalStateException("close cannot run inside an operation of the store");
        }
        gate.acquire();
        try {
            closeHeld();
        } finally {
            gate.release();
            if (closed) { // also when the close threw, having closed the store all the same
                runCloseHooks();
            }
        }
    }

    private void runCloseHooks() {
        List<Runnable> hooks;
        synchronized (this) {
            hooks = List.copyOf(closeHooks);
            closeHooks.clear(); // once: a second close runs none
        }
        for (Runnable r : hooks) {
            try {
                r.run();
            } catch (RuntimeException e) {
                System.getLogger(HtodStore.class.getName()).log(System.Logger.Level.WARNING,
                        () -> "a task run at the close of " + this + " failed: " + e);
            }
        }
    }

    /**
     * Runs {@code r} once the store has closed (right away if it has): what others keep about the
     * store goes with it ({@code HtodMetrics} removes its meters so).
     */
    void onClose(Runnable r) {
        synchronized (this) {
            if (!closed) {
                closeHooks.add(r);
                return;
            }
        }
        r.run();
    }

    private void closeHeld() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        WriteLayer layer = this.layer;
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
        // Neither cut short by an interrupt: giving up here left the tables open, the file locked
        // for the process's life, and a second close returned at once since the store was closed.
        boolean interrupted = false;
        try {
            if (syncer != null) {
                syncer.shutdown();
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
                boolean ended = false;
                while (!ended && System.nanoTime() < deadline) {
                    try {
                        ended = syncer.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
            tables.close();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        WriteLayer layer = this.layer;
        return "HtodStore[" + (layer != null ? layer.deviceName() + ", log" : tables.storage().heap().device().name()
                + ", direct") + ", " + durability + "]";
    }
}
