package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongSupplier;
import org.htod.core.DeviceFailedException;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.htod.core.alloc.Heap;
import org.htod.core.log.Log;
import org.htod.core.storage.Storage;
import org.htod.table.Change;
import org.htod.table.HashtableOnDisk;
import org.htod.table.Installer;
import org.htod.table.Mutation;
import org.htod.table.PlacedEntries;
import org.htod.table.StoredEntry;
import org.htod.table.TableStore;

/**
 * The write layer of a logged store (thesis 001, papers 000, 002, 003): every change is a record
 * in the log, made durable by group commit, and a state in the modified-object buffer, where
 * reads find it; a flusher thread ({@link Flusher}) installs the buffer into the tables, oldest
 * first, a batch at a time (each batch one install record, its new entries placed together by
 * OBA, its installation reads served by the entry cache where it can), runs the tables'
 * doublings, and takes checkpoints that let the log's space be reused (that work is {@link
 * Installs}'s). This class takes the writes, opens maps, heals the log after a failed write, and
 * closes.
 *
 * <h2>Locks, outermost first</h2>
 *
 * <ul>
 *   <li>{@link #appendGuard}, read side: a writer holds it from its log append until its change is
 *       in the buffer; a checkpoint takes the write side for an instant, to read where the log
 *       ends and where the buffer's oldest record lies as one consistent pair.
 *   <li>A key's stripe lock in the buffer ({@link Mob#lock}): held by a writer while it decides,
 *       logs and buffers a change of the key (at durability SYNC, through its group commit, so
 *       that what readers see is durable), and by the flusher while it takes or releases a key.
 *       A writer never waits for room in the log or the buffer while holding it.
 *   <li>{@link #install}: every change of the heap and the tables (installs, doublings,
 *       checkpoints, map creation) happens with it held, one at a time.
 * </ul>
 */
public final class WriteLayer {
    /**
     * How the write layer behaves; see the builder's options. {@code readOnly}: a read-only open's
     * layer, which starts no flusher (what its open replayed stays in the buffer, and nothing is
     * installed, doubled or checkpointed behind the reader's back).
     */
    public record Options(Durability durability, long bufferBytes, long syncIntervalMillis, int installBatch,
            int placeValuesFrom, boolean readOnly) {}

    /** When changes are durable, as the store's durability says. */
    public enum Durability { SYNC, ASYNC, NONE }

    final Storage storage;
    final Heap heap;
    final TableStore tables;
    final Log log;
    final Mob mob;
    private final Options options;
    private final LongSupplier clock;
    private final ReentrantReadWriteLock appendGuard = new ReentrantReadWriteLock(true);
    /** Fair: a map's size waits for the install under way, not for every install the flusher queues after it. */
    private final ReentrantLock install = new ReentrantLock(true);
    private final Map<String, BufferedMap> maps = new ConcurrentHashMap<>();
    private final Map<Long, BufferedMap> byId = new ConcurrentHashMap<>();
    private final Flusher flusher;
    private final Stats stats = new Stats();
    /** Installs, doubling steps and checkpoints, each under {@link #install}. */
    final Installs installs;
    private volatile boolean closing;
    private volatile boolean closed;
    /**
     * How long a close waits for the flusher's last install and checkpoint before it gives up:
     * a flusher inside a device operation that never returns (a hung disk or network mount) held
     * the closing thread for ever, a shutdown hook with it. Direct mode's close waits as long for
     * its syncer. Tests shorten it.
     */
    long closeWaitNanos = TimeUnit.MINUTES.toNanos(1);
    /** A close gave up waiting for the flusher ({@link #closeWaitNanos}); the next close waits again. Under this. */
    private boolean closeGaveUp;

    /** Counters the store's statistics read; written under the install lock, read without it. */
    static final class Stats {
        volatile long installs;
        volatile long installedKeys;
        volatile long checkpoints;
        volatile long doublingSteps;
        volatile long installFailures;
        /** Nanoseconds the flusher spent at work (see {@code Flusher.countWork}); written by its thread only. */
        volatile long flusherBusyNanos;
    }

    /**
     * The write layer's figures for the store's statistics, read without stopping anything (each
     * figure is exact, the set of them not taken at one instant).
     *
     * @param groupCommits group commits of the log so far (writes of the log, each ending in one
     *     sync at durability SYNC)
     * @param recordsCommitted log records those group commits carried
     * @param bufferBytes bytes of the changes in the write buffer
     * @param bufferCapacity bytes the buffer may hold before writers wait
     * @param bufferedKeys keys with a change in the buffer
     * @param changesBuffered changes put in the buffer since the store opened
     * @param changesAbsorbed of those, changes that replaced an earlier change of the same key still in the buffer
     * @param installs install batches the flusher wrote
     * @param installedKeys keys those installs wrote into the tables
     * @param checkpoints checkpoints taken
     * @param doublingSteps doubling steps of the tables
     * @param logUsedBytes bytes of the log region holding records not yet released by a checkpoint
     * @param logRegionBytes bytes of the log region
     * @param bufferWaits writes that waited for room in the buffer (back-pressure: the flusher's
     *     installs behind the writers)
     * @param bufferWaitNanos nanoseconds those writes waited, in all
     * @param logWaits writes that waited for room in the log (the checkpoints that free it behind
     *     the writers)
     * @param logWaitNanos nanoseconds those writes waited, in all
     * @param installReads chain entries installs read from the device to find their keys
     * @param installReadsCached chain entries installs found in the entry cache: the installation
     *     reads the cache avoided
     * @param flusherBusyNanos nanoseconds the flusher spent at work, not waiting for it
     */
    public record Figures(long groupCommits, long recordsCommitted, long bufferBytes, long bufferCapacity,
            long bufferedKeys, long changesBuffered, long changesAbsorbed, long installs, long installedKeys,
            long checkpoints, long doublingSteps, long logUsedBytes, long logRegionBytes, long bufferWaits,
            long bufferWaitNanos, long logWaits, long logWaitNanos, long installReads, long installReadsCached,
            long flusherBusyNanos) {}

    /** See {@link Figures}. */
    public Figures figures() {
        long[] groups = log.groupCounts();
        long[] buffered = mob.counts();
        long[] bufferWaits = mob.roomWaits();
        long[] logWaits = log.roomWaits();
        long[] installReads = tables.installReads();
        return new Figures(groups[0], groups[1], mob.bytes(), mob.capacity(), mob.keys(), buffered[0], buffered[1],
                stats.installs, stats.installedKeys, stats.checkpoints, stats.doublingSteps, log.used(),
                log.regionSize(), bufferWaits[0], bufferWaits[1], logWaits[0], logWaits[1], installReads[0],
                installReads[1], stats.flusherBusyNanos);
    }

    /** The storage under the tables: the heap and the superblock. */
    public Storage storage() {
        return storage;
    }

    /** The tables under the buffer. */
    public TableStore tables() {
        return tables;
    }

    WriteLayer(Storage storage, TableStore tables, Log log, Installer installer, Mob mob, Options options,
            LongSupplier clock, long checkpointBlock) {
        this.storage = storage;
        this.heap = storage.heap();
        this.tables = tables;
        this.log = log;
        this.mob = mob;
        this.options = options;
        this.clock = clock;
        this.installs = new Installs(storage, tables, log, installer, mob, install, appendGuard, byId,
                options.installBatch(), stats, this::healIfNeeded, checkpointBlock);
        for (HashtableOnDisk t : tables.maps()) {
            BufferedMap m = new BufferedMap(this, t, mob, clock);
            maps.put(t.name(), m);
            byId.put(m.tableId, m);
        }
        this.flusher = new Flusher(this, mob, log, installs, options, stats);
    }

    /** Starts the flusher, unless the store is opened read-only. */
    void start() {
        if (!options.readOnly()) {
            flusher.start();
        }
    }

    // ------------------------------------------------------------------ maps

    /** The map called {@code name}, created (durably, in one install record) if absent and {@code create}; else null. */
    public BufferedMap map(String name, boolean create) {
        ensureOpen();
        BufferedMap m = maps.get(name);
        if (m != null || !create) {
            return m;
        }
        install.lock();
        try {
            ensureWritable();
            healIfNeeded();
            m = maps.get(name);
            if (m == null) {
                HashtableOnDisk t = tables.table(name, true);
                // Durable before any change of the map can be logged: replay needs the catalog to
                // know every table its records name. Should this fail, the table waits in memory
                // and the next call commits it again.
                tables.commit();
                m = new BufferedMap(this, t, mob, clock);
                byId.put(m.tableId, m);
                maps.put(name, m);
            }
        } finally {
            install.unlock();
        }
        return m;
    }

    public List<String> mapNames() {
        ensureOpen();
        return tables.names();
    }

    // ------------------------------------------------------------------ writes

    void update(BufferedMap m, byte[] key, Mutation mutation) {
        write(m, key, mutation, false);
    }

    /** An update whose mutation sees the key's entry even when it has expired. */
    void updateRaw(BufferedMap m, byte[] key, Mutation mutation) {
        write(m, key, mutation, true);
    }

    private void write(BufferedMap m, byte[] key, Mutation mutation, boolean raw) {
        long hash = m.table.hash(key);
        ReentrantLock stripe = mob.lock(m.tableId, hash);
        if (stripe.isHeldByCurrentThread()) {
            throw new IllegalStateException("recursive update of map '" + m.table.name() + "': a function given to"
                    + " compute or merge must not write the map it runs on");
        }
        // Room waited for before the locks: at first for the key alone (the change is not known
        // yet), and only while the flusher works, since it may be a removal (see
        // Mob.awaitRoomBeforeDeciding); after a try that found too little, for what that change
        // needs.
        long bufferNeed = key.length + 64;
        Object decidedOn = null;
        Change decided = null;
        while (true) {
            ensureWritable();
            healIfNeeded();
            if (decided == null) {
                mob.awaitRoomBeforeDeciding(bufferNeed);
            } else {
                awaitBufferRoom(bufferNeed, decided.isRemove());
            }
            int logNeed = 0;
            appendGuard.readLock().lock();
            stripe.lock();
            try {
                ensureWritable();
                Mob.Pending p = mob.get(m.tableId, key);
                StoredEntry inTableEntry = null;
                StoredEntry cur;
                int inTable;
                long now = clock.getAsLong();
                if (p != null) {
                    Mob.Value v = p.current;
                    inTable = p.inTable;
                    cur = v.value() != null && (raw || v.liveAt(now))
                            ? StoredEntry.buffered(hash, v.version(), v.expiry(), key, v.value()) : null;
                } else {
                    inTableEntry = m.table.read(key, mutation.readsValue());
                    inTable = inTableEntry == null ? 0 : 1;
                    cur = inTableEntry == null || (!raw && inTableEntry.expiredAt(now)) ? null : inTableEntry;
                }
                // A decision made before waiting for room stands if the key has not changed since;
                // else the mutation is asked again (as ConcurrentMap allows).
                Change c = decided != null && state(p, inTableEntry, cur).equals(decidedOn) ? decided : mutation.apply(cur);
                if (c == null) {
                    return;
                }
                if (c.isRemove() && cur == null && (p == null ? inTable == 0 : p.current.isRemove())) {
                    return; // nothing to remove
                }
                // The buffer's room is taken before the change is placed and logged, and waited
                // for with the locks released if it is short (see Mob.tryReserve).
                long reserved = Math.max(0, Mob.bytesOf(key, c.isRemove() ? null : c.value())
                        - (p == null ? 0 : p.bytes()));
                if (!mob.tryReserve(reserved, c.isRemove())) {
                    decidedOn = state(p, inTableEntry, cur);
                    decided = c;
                    bufferNeed = reserved;
                    continue;
                }
                try {
                    long version = c.version() != 0 ? c.version() : cur != null ? Change.after(cur.version()) : 1;
                    Mob.Value v = place(m, key, c, version);
                    DataRecord.Op op = new DataRecord.Op(m.tableId, key, v.value(), version, c.expiry(), placedOf(v));
                    ByteBuffer payload = DataRecord.encode(List.of(op));
                    // Should the append throw, a placed block stays allocated (unrecorded) until the
                    // store reopens: the record may have been appended and written before a failure
                    // dropped it, and a dropped record can still be replayed if the process dies
                    // before the log heals.
                    // A removal may take part of the flusher's reserve of the log: with the store
                    // full, it is what makes room (see Log.tryAppendFreeing).
                    Log.Appended a = c.isRemove() ? log.tryAppendFreeing(DataRecord.TYPE, payload)
                            : log.tryAppend(DataRecord.TYPE, payload, v.placed() != 0);
                    if (a == null) {
                        if (v.placed() != 0) {
                            heap.unrecorded().release(v.placed()); // no record names it
                        }
                        decidedOn = state(p, inTableEntry, cur); // only now: a decision that did not wait needs none
                        decided = c;
                        logNeed = payload.remaining();
                    } else {
                        try {
                            finish(a);
                        } catch (HtodException e) {
                            // A placed block goes back once the log has healed over the record, if a
                            // failure dropped it; not before, when a crash could still replay it. A
                            // record that turns out durable names it, and it stays allocated
                            // (unrecorded) until the store reopens.
                            if (v.placed() != 0) {
                                installs.replaced.addDropped(v.placed(), a.lsn(), a.generation());
                            }
                            throw e;
                        }
                        mob.put(m.tableId, key, hash, v, a.lsn(), a.generation(), p == null ? inTable : p.inTable,
                                reserved);
                        reserved = 0;
                        if (v.placed() != 0) {
                            installs.placedLogged.addAndGet(v.value().length);
                        }
                                break;
                    }
                } finally {
                    mob.unreserve(reserved);
                }
            } finally {
                stripe.unlock();
                appendGuard.readLock().unlock();
            }
            if (logNeed > 0) {
                awaitLogRoom(logNeed, decided.isRemove());
            }
        }
        afterChange();
    }

    /**
     * After a change is logged and buffered, its locks released: gives back the blocks of the
     * placed values it (or another) replaced whose replacing records are durable, at SYNC its own
     * at once, and nudges the flusher.
     */
    private void afterChange() {
        installs.replaced.releaseDurable();
        // Back-pressure on replaced placed values at ASYNC and NONE: their blocks wait for a sync
        // that only the flusher makes, and a flusher starved of the processor let them pile up (a
        // churn of 8 MB of live values took 42 MB of heap under a loaded build, 17 MB alone), so
        // the writer syncs for them itself. Not inside a compute function, whose thread holds the
        // append guard that a relog the sync may wait for needs.
        if (installs.replaced.overdue(mob.capacity()) && !mob.holdsAnyLock()) {
            try {
                installs.replaced.syncAndGiveBack();
            } catch (HtodException e) {
                // this write is made; the next one heals the log
            }
        }
        flusher.nudge();
    }

    /**
     * The state a change gives its key. A put of a value of at least {@link
     * Options#placeValuesFrom} bytes writes the key's entry into a heap block first, allocated
     * unrecorded ({@link Heap#allocateUnrecorded}): the log record names the block instead of
     * carrying the value, and its commit syncs the device, so the value reaches the disk once. Its
     * install records and links the block. A crash before then leaves the block free to
     * recovery, which takes it back for each key whose last record names it.
     */
    private Mob.Value place(BufferedMap m, byte[] key, Change c, long version) {
        if (c.isRemove() || options.placeValuesFrom() <= 0 || c.value().length < options.placeValuesFrom()) {
            return new Mob.Value(c.isRemove() ? null : c.value(), c.expiry(), version);
        }
        ByteBuffer entry = PlacedEntries.encode(m.table, version, c.expiry(), key, c.value());
        long block = heap.allocateUnrecorded(entry);
        return new Mob.Value(c.value(), c.expiry(), version, block, PlacedEntries.headCrc(entry));
    }

    /** How a record names a placed value's block, or null if the value is not placed. */
    static DataRecord.Placed placedOf(Mob.Value v) {
        return v.placed() == 0 ? null : new DataRecord.Placed(v.placed(), v.placedHeadCrc(), v.value().length);
    }

    /**
     * What a decision was made on, to tell after a wait whether the key changed meanwhile: the
     * buffered value itself, or the table's entry by version, expiry and the bytes of its value
     * read; and whether the function saw it live ({@code cur}): a value that expired during the
     * wait is a change the decision did not see.
     */
    private static Object state(Mob.Pending p, StoredEntry inTable, StoredEntry cur) {
        Object of = p != null ? p.current
                : inTable == null ? "absent"
                : new TableState(inTable.version(), inTable.expiry(), inTable.value());
        return java.util.List.of(of, cur != null);
    }

    /**
     * A table entry as a decision saw it, its value compared byte for byte: a hash of it, as
     * before, let a different value of the same version and expiry (a key removed and put again
     * restarts at version 1; "Aa" and "BB" hash alike) pass for the one decided on, and a
     * {@code replace} decided on the old value overwrote the new one.
     */
    private record TableState(long version, long expiry, byte[] value) {
        @Override
        public boolean equals(Object o) {
            return o instanceof TableState t && t.version == version && t.expiry == expiry
                    && java.util.Arrays.equals(t.value, value);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(version) * 31 + java.util.Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return "version " + version + ", expiry " + expiry + ", " + (value == null ? "no value read" : value.length
                    + " bytes");
        }
    }

    /**
     * Waits for room in the write buffer for a decided change ({@code freeing}: removals only),
     * which only the flusher makes; a writer that sees the flusher fail meanwhile gets its error
     * (see {@code Mob.stall}).
     */
    private void awaitBufferRoom(long bytes, boolean freeing) {
        mob.awaitRoom(bytes, freeing);
    }

    /**
     * Waits for room in the log ({@code freeing}: for removals only, see {@code
     * Log.tryAppendFreeing}), which only the flusher's checkpoints make (see {@code Log.stall}).
     */
    private void awaitLogRoom(int bytes, boolean freeing) {
        if (freeing) {
            log.awaitRoomFreeing(bytes);
        } else {
            log.awaitRoom(bytes);
        }
    }

    /** After an append: at SYNC, waits for its group commit (the caller still holds the key's lock). */
    private void finish(Log.Appended a) {
        if (options.durability() == Durability.SYNC) {
            log.awaitDurable(a);
        }
    }

    /** Puts many keys: a record per chunk, each put a blind write with the version it decides. Not atomic as a whole. */
    void putAll(BufferedMap m, List<byte[]> keys, List<byte[]> values, long expiry) {
        for (int i = 0; i < keys.size(); i++) {
            byte[] v = values.get(i);
            write(m, keys.get(i), Mutation.blind(cur -> Change.put(v, expiry)), false);
        }
    }

    /** One operation of a {@link #batch}: a put ({@code value} non-null, {@code version} 0 for the next) or a removal. */
    public record BatchOp(BufferedMap map, byte[] key, byte[] value, long expiry, long version) {}

    /** Most bytes a batch's operations may take: it is one log record. */
    public long maxBatchBytes() {
        return log.maxPayload();
    }

    /**
     * Commits operations over maps of this store as one log record: after a crash every one of
     * them is there, or none. A versioned put that is not newer than the key's version is left
     * out (Thomas write rule). Returns how many operations were applied.
     */
    public int batch(List<BatchOp> ops) {
        if (ops.isEmpty()) {
            return 0;
        }
        List<BufferedMap> ms = new ArrayList<>(ops.size());
        List<Long> hashes = new ArrayList<>(ops.size());
        // As WriteBatch counts: 64 bytes an operation covers its fields and the record's count.
        int bytes = 0;
        for (BatchOp op : ops) {
            BufferedMap m = op.map();
            if (m.layer != this) {
                throw new IllegalArgumentException("a batch holds operations on maps of one store");
            }
            ms.add(m);
            hashes.add(m.table.hash(op.key()));
            bytes += 64 + op.key().length + (op.value() == null ? 0 : op.value().length);
        }
        if (bytes > log.maxPayload()) {
            throw new IllegalArgumentException("a batch of about " + bytes + " bytes exceeds the log's record limit of "
                    + log.maxPayload());
        }
        long bufferNeed = bytes; // as in write: at first an estimate, then what a try found short
        boolean decided = false;
        // A batch of removals alone makes room as a removal does (see write).
        boolean freeing = true;
        for (BatchOp op : ops) {
            freeing &= op.value() == null;
        }
        // every stripe the batch touches, locked in one order: by stripe index (identity hash
        // codes, used before, can collide, and a collision left one of the stripes unlocked)
        TreeMap<Integer, ReentrantLock> locks = new TreeMap<>();
        for (int i = 0; i < ops.size(); i++) {
            locks.put(mob.stripe(ms.get(i).tableId, hashes.get(i)), mob.lock(ms.get(i).tableId, hashes.get(i)));
        }
        int applied = 0;
        while (true) {
            ensureWritable();
            healIfNeeded();
            if (decided) {
                awaitBufferRoom(bufferNeed, freeing);
            } else {
                mob.awaitRoomBeforeDeciding(bufferNeed);
            }
            int logNeed = 0;
            appendGuard.readLock().lock();
            List<ReentrantLock> held = new ArrayList<>();
            try {
                for (ReentrantLock l : lockOrder(locks)) {
                    l.lock();
                    held.add(l);
                }
                ensureWritable();
                List<DataRecord.Op> logged = new ArrayList<>();
                List<Integer> inTable = new ArrayList<>();
                // The hashes of the logged operations. Not kept by overwriting ms and hashes in place,
                // as before: a retry after a full log read them again by the index of ops, and a
                // versioned put left out had shifted them, so a key was looked up with another
                // key's hash (and could pass the version check it should fail).
                List<Long> loggedHashes = new ArrayList<>();
                // What each logged operation reserves of the buffer (see Mob.tryReserve): its
                // bytes, less the key's buffered bytes at its first operation; a later operation
                // of the same key reserves all of its bytes, and its put gives back the excess.
                List<Long> reserves = new ArrayList<>();
                Map<BufferedMap, Map<ByteBuffer, Long>> versionsInBatch = new IdentityHashMap<>();
                long now = clock.getAsLong();
                for (int i = 0; i < ops.size(); i++) {
                    BatchOp op = ops.get(i);
                    BufferedMap m = ms.get(i);
                    Mob.Pending p = mob.get(m.tableId, op.key());
                    // one walk of the key's chain tells both its version and whether the table
                    // holds it (expired or not: the buffer counts the map's size from that)
                    StoredEntry stored = p == null ? m.table.read(op.key(), false) : null;
                    StoredEntry cur = p != null ? BufferedMap.buffered(p, op.key(), hashes.get(i), now)
                            : stored == null || stored.expiredAt(now) ? null : stored;
                    Long inBatch = versionsInBatch.computeIfAbsent(m, x -> new HashMap<>()).get(ByteBuffer.wrap(op.key()));
                    long curVersion = inBatch != null ? inBatch : cur == null ? 0 : cur.version();
                    if (op.value() == null) {
                        logged.add(new DataRecord.Op(m.tableId, op.key(), null, 0, 0));
                        versionsInBatch.get(m).put(ByteBuffer.wrap(op.key()), 0L);
                    } else {
                        long version = op.version() != 0 ? op.version() : Change.after(curVersion);
                        if (op.version() != 0 && op.version() <= curVersion) {
                            continue; // Thomas write rule: not newer than what the key holds
                        }
                        logged.add(new DataRecord.Op(m.tableId, op.key(), op.value(), version, op.expiry()));
                        versionsInBatch.get(m).put(ByteBuffer.wrap(op.key()), version);
                    }
                    inTable.add(p != null ? p.inTable : stored != null ? 1 : 0);
                    loggedHashes.add(hashes.get(i));
                    long buffered = p != null && inBatch == null ? p.bytes() : 0;
                    reserves.add(Math.max(0, Mob.bytesOf(op.key(), op.value()) - buffered));
                }
                if (logged.isEmpty()) {
                    return 0;
                }
                long reserved = reserves.stream().mapToLong(Long::longValue).sum();
                if (!mob.tryReserve(reserved, freeing)) {
                    bufferNeed = reserved;
                    decided = true;
                    continue;
                }
                try {
                    ByteBuffer payload = DataRecord.encode(logged);
                    Log.Appended a = freeing ? log.tryAppendFreeing(DataRecord.TYPE, payload)
                            : log.tryAppend(DataRecord.TYPE, payload);
                    if (a != null) {
                        finish(a);
                        for (int i = 0; i < logged.size(); i++) {
                            DataRecord.Op op = logged.get(i);
                            mob.put(op.tableId(), op.key(), loggedHashes.get(i), new Mob.Value(op.value(), op.expiry(),
                                    op.version()), a.lsn(), a.generation(), inTable.get(i), reserves.get(i));
                            reserved -= reserves.get(i);
                        }
                        applied = logged.size();
                    } else {
                        logNeed = payload.remaining();
                        decided = true;
                    }
                } finally {
                    mob.unreserve(reserved);
                }
            } finally {
                for (int i = held.size() - 1; i >= 0; i--) {
                    held.get(i).unlock();
                }
                appendGuard.readLock().unlock();
            }
            if (applied > 0) {
                // As a single write: the placed values the batch replaced go back once its record
                // is durable, not at the next single write or install.
                afterChange();
                return applied;
            }
            if (logNeed > 0) {
                awaitLogRoom(logNeed, freeing);
            }
        }
    }

    private static List<ReentrantLock> lockOrder(TreeMap<Integer, ReentrantLock> locks) {
        return new ArrayList<>(locks.values());
    }

    /**
     * A map's size, read with no install running: an install changes the table's count and then
     * takes its keys out of the buffer, and a size read between the two would miss (or count
     * twice) every key of the batch, even in a map nobody writes. A thread inside a compute
     * function holds a key's stripe lock, which the flusher takes under the install lock: it reads
     * without waiting, as before.
     */
    long size(BufferedMap m) {
        if (mob.holdsAnyLock()) {
            return m.sizeNow();
        }
        install.lock();
        try {
            return m.sizeNow();
        } finally {
            install.unlock();
        }
    }

    /**
     * Makes every change so far durable. Not from inside a compute function: that thread holds a
     * key's lock and the append guard, for which a heal's relog waits, while the sync would wait
     * for the relog.
     */
    public void sync() {
        ensureOpen();
        if (mob.holdsAnyLock()) {
            throw new IllegalStateException("a function given to compute or merge must not sync the store");
        }
        healIfNeeded();
        log.sync();
        // The records that replaced placed values are durable now: their blocks go back at once,
        // not at the next write or install, which an application that syncs and stops may not make
        installs.replaced.releaseDurable();
    }

    /**
     * After a failed log write: the log heals (the device permitting) and what it dropped is
     * logged again, within the heal, so that no sync returns between the two (see {@link
     * Log#heal(Runnable)}).
     */
    private void healIfNeeded() {
        if (!log.failed() && !installs.cleanMayStand()) {
            return;
        }
        if (mob.holdsAnyLock()) {
            // Inside a compute function, writing another key: the relog would wait for the append
            // guard this thread holds. The write goes on to the log's refusal, and the first write
            // outside such a function heals.
            return;
        }
        install.lock();
        try {
            // After a close that failed at its clean superblock: not clean again before any record.
            installs.unmarkClean();
            log.heal(this::relogDropped);
        } catch (HtodException e) {
            DeviceFailedException gone = Flusher.deviceFailed(e);
            if (gone != null) {
                // The device refuses every sync since one failed: no heal can ever pass. The
                // flusher stops now, as it does when it meets this itself, so that the layer
                // says so (failure()) and refuses changes for that reason, not only at the
                // flusher's next round, which an idle store may not come to.
                flusher.stopOn(gone);
            }
            throw e;
        } finally {
            install.unlock();
        }
    }

    /**
     * The log dropped records: at durability SYNC their writers were told and buffered nothing;
     * at ASYNC and NONE their changes are in the buffer, acknowledged, and are logged again here,
     * so that the next sync makes them durable. A key is logged again when its newest record was
     * dropped by any failure ({@link Log#dropped}), not only the one this heal ends: a relog that
     * a second failure cut short leaves keys whose dropped records lie before that failure's
     * range, and a sync that followed would then return with their changes in no record.
     */
    private void relogDropped() {
        appendGuard.writeLock().lock();
        try {
            List<Mob.Pending> keys = new ArrayList<>();
            List<DataRecord.Op> ops = new ArrayList<>();
            for (BufferedMap m : byId.values()) {
                for (Mob.Pending p : mob.of(m.tableId)) {
                    if (!log.dropped(p.lastLsn, p.lastGeneration)) {
                        continue; // durable, or appended since the heal
                    }
                    Mob.Value v = p.current;
                    // A placed value is logged again naming the same block, which stayed allocated.
                    keys.add(p);
                    ops.add(new DataRecord.Op(p.tableId, p.key, v.value(), v.version(), v.expiry(), placedOf(v)));
                }
            }
            if (ops.isEmpty()) {
                // No buffered key's newest record was dropped: a change whose dropped record
                // replaced a placed value was replaced in turn, by a record appended since the
                // heal (a writer that held the append guard across it). Its replaced block waits
                // for everything appended so far, that newer record among them; left pointing at
                // the dropped record, it would wait for good, and hold back every block after it.
                Log.Appended now = log.appendedSoFar();
                installs.replaced.relogged(Math.max(0, now.lsn() - 1), now.generation());
                return;
            }
            // Replayed whole or not at all: the changes of one WriteBatch, dropped together, and
            // any later change of one of its keys (which carries that key's newer state here) must
            // not come back in part. So in one record when they fit, else in one relog unit of
            // several, which replay leaves out whole unless it reads every part.
            Log.Appended first;
            Log.Appended last;
            if (DataRecord.size(ops) <= log.maxPayload()) {
                first = last = log.appendReserved(DataRecord.TYPE, DataRecord.encode(ops), namesPlaced(ops));
            } else {
                List<List<DataRecord.Op>> parts = DataRecord.split(ops, log.maxPayload());
                first = null;
                last = null;
                for (int i = 0; i < parts.size(); i++) {
                    List<DataRecord.Op> part = parts.get(i);
                    last = log.appendReserved(DataRecord.PART_TYPE, DataRecord.encodePart(i, parts.size(), part),
                            namesPlaced(part));
                    first = first == null ? last : first;
                }
            }
            // Only now, with every part appended: a key is dropped until the unit's last part is
            // durable (a failure between parts leaves each key's dropped record as it was, and the
            // next heal logs all of them again), and keeps the log from the unit's first part.
            Log.Appended from = first;
            Log.Appended to = last;
            mob.eachUnderLock(keys, i -> mob.relogged(keys.get(i), from.lsn(), to.lsn(), to.generation()));
            installs.replaced.relogged(to.lsn(), to.generation());
        } finally {
            appendGuard.writeLock().unlock();
        }
    }

    /** Whether {@code ops} name a placed value's block, which their record's write must find durable. */
    private static boolean namesPlaced(List<DataRecord.Op> ops) {
        for (DataRecord.Op op : ops) {
            if (op.placed() != null) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ lifecycle

    public String deviceName() {
        return heap.device().name();
    }

    /** Whether a close has begun (and not given up): the flusher drains the buffer whole. */
    boolean closing() {
        return closing;
    }

    void ensureOpen() {
        if (closed || closing) {
            throw new StoreClosedException("the store on " + heap.device().name() + " is closed");
        }
    }

    /** For writes: open, and the flusher not stopped on damage (a write could never be installed). */
    private void ensureWritable() {
        ensureOpen();
        if (installs.cleanMayStand() && mob.holdsAnyLock()) {
            // Under a key's lock, where the superblock cannot be written (the install lock comes
            // first): the write before the locks (healIfNeeded) does that, or fails.
            throw new HtodException("the store on " + heap.device().name() + " takes no change until its superblock"
                    + " no longer says it was closed cleanly: a close failed writing it");
        }
        HtodException f = flusher.stopped();
        if (f != null) {
            throw new HtodException("the store on " + heap.device().name() + " takes no more changes: its flusher stopped ("
                    + f.getMessage() + "); reads go on, and reopening recovers what the log holds", f);
        }
    }

    /**
     * Why the layer takes no more changes until the store is reopened, or null: the flusher
     * stopped for good, or the heap refuses changes after a device error in the middle of one
     * (every install would then fail). Not a failure the layer gets over: a log write that the
     * next write heals, a full disk.
     */
    public HtodException failure() {
        HtodException f = flusher.stopped();
        return f != null ? f : heap.failure();
    }

    /** The flusher's last error, while it retries; null when it works. */
    public HtodException flusherFailure() {
        return flusher.failure();
    }

    /**
     * Runs the structural verifier over the tables, with every install committed and no install
     * running: the checkpoint's block is the one allocated block no table reaches. The buffer's
     * changes are in memory and the log, not yet in the tables; the verifier checks what is.
     */
    public org.htod.table.TableVerifyReport verify() {
        return verify(org.htod.core.StepListener.NONE);
    }

    /** {@link #verify()}, telling {@code progress} of the blocks the verifier meets. */
    public org.htod.table.TableVerifyReport verify(org.htod.core.StepListener progress) {
        ensureOpen();
        install.lock();
        try {
            tables.commit();
            // The headers say the tables' states as of the last checkpoint; the verifier compares
            // them with memory, so they are written now (log mode's recovery reads only their ids).
            tables.writeHeaders();
            return tables.verify(true, h -> installs.isCheckpointBlock(h) || heap.unrecorded().contains(h), progress);
        } finally {
            install.unlock();
        }
    }

    /**
     * Hands {@code sink} every live entry of every map as of one instant, while writers go on: a
     * consistent copy of an open store. Installs, checkpoints and doublings wait until it returns,
     * so the tables do not change; writers are held off only for the instant it takes to list the
     * buffer's states (every change logged is in the buffer then, so the instant is a prefix of
     * the log), and afterwards only if the buffer fills. {@code total} first gets the number of
     * entries to come (expired ones not yet removed included, so an upper bound). A map's size
     * waits for it, as it waits for an install.
     */
    public void copyFrozen(java.util.function.LongConsumer total, java.util.function.BiConsumer<String, StoredEntry> sink) {
        ensureOpen();
        install.lock();
        try {
            Map<Long, Map<ByteBuffer, Mob.Pending>> frozen = new HashMap<>();
            Map<Mob.Pending, Mob.Value> states = new IdentityHashMap<>();
            appendGuard.writeLock().lock();
            try {
                for (Mob.Pending p : mob.all()) {
                    frozen.computeIfAbsent(p.tableId, t -> new HashMap<>()).put(ByteBuffer.wrap(p.key), p);
                    states.put(p, p.current);
                }
            } finally {
                appendGuard.writeLock().unlock();
            }
            long now = clock.getAsLong();
            TreeMap<String, BufferedMap> sorted = new TreeMap<>(maps);
            long n = 0;
            for (BufferedMap m : sorted.values()) {
                n += m.sizeNow();
            }
            total.accept(n);
            for (Map.Entry<String, BufferedMap> e : sorted.entrySet()) {
                BufferedMap m = e.getValue();
                Map<ByteBuffer, Mob.Pending> over = frozen.getOrDefault(m.tableId, Map.of());
                for (java.util.Iterator<StoredEntry> it = m.table.iterator(true); it.hasNext();) {
                    StoredEntry t = it.next();
                    if (!over.containsKey(ByteBuffer.wrap(t.key())) && !t.expiredAt(now)) {
                        sink.accept(e.getKey(), t);
                    }
                }
                for (Mob.Pending p : over.values()) {
                    Mob.Value v = states.get(p);
                    if (v.liveAt(now)) {
                        sink.accept(e.getKey(), StoredEntry.buffered(p.hash, v.version(), v.expiry(), p.key, v.value()));
                    }
                }
            }
        } finally {
            install.unlock();
        }
    }

    /** Installs every buffered change and takes a checkpoint, so that a reopen after a crash reads little. */
    public void checkpointNow() {
        ensureOpen();
        installs.everything();
    }

    /**
     * Ends the flusher thread: a test that must know every install and doubling step then runs
     * them itself. The store stays readable and writable until its buffer is full; its close does
     * not install what is buffered (the next open recovers it from the log).
     */
    void stopFlusherThread() throws InterruptedException {
        flusher.interruptAndJoin();
    }

    /** The install lock: a test holds it to keep the flusher off while it runs installs itself. */
    ReentrantLock installLock() {
        return install;
    }

    /** Reads the write layer's figures for the store's statistics. */
    Stats stats() {
        return stats;
    }

    /**
     * Clean shutdown: no new change is accepted, the flusher installs every buffered change and
     * takes a last checkpoint that marks the store clean, then the device is closed. If the device
     * keeps failing (the disk full), the store stays open and this throws; close may be called
     * again. If the flusher stopped for good (damage), the device is closed all the same and the
     * next open recovers from the log. If the flusher has not finished after {@link
     * #closeWaitNanos} (a device operation that does not return), this throws, the store stays
     * closing (refusing reads and writes, its log holding every acknowledged change), and close
     * may be called again to wait more.
     */
    public void close() {
        synchronized (this) {
            if (closed || closing && !closeGaveUp) {
                return;
            }
            closing = true;
            closeGaveUp = false;
        }
        appendGuard.writeLock().lock(); // wait for writers in the middle of a change
        appendGuard.writeLock().unlock();
        flusher.wake();
        // Not cut short by an interrupt: the flusher's last install and checkpoint are what make
        // the buffered changes durable at ASYNC and NONE, and closing the log under it lost them.
        boolean interrupted = false;
        long deadline = System.nanoTime() + closeWaitNanos;
        try {
            while (true) {
                try {
                    if (flusher.join(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))) {
                        break;
                    }
                    if (System.nanoTime() - deadline >= 0) {
                        synchronized (this) {
                            closeGaveUp = true;
                        }
                        throw new HtodException("the store on " + heap.device().name() + " could not close: its flusher"
                                + " has not finished its last install after " + TimeUnit.NANOSECONDS.toMillis(closeWaitNanos)
                                + " ms, in a device operation that does not return (" + flusher.where() + "); the store"
                                + " stays closing, refusing reads and writes, its log holds every acknowledged change,"
                                + " and close() may be called again");
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            closeAfterFlusher();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void closeAfterFlusher() {
        HtodException failed = flusher.closeFailure();
        if (failed != null && flusher.stopped() == null) {
            // The device keeps failing (the disk full): the store stays open, readable and
            // writable as before, with a new flusher, so that close can be called again once the
            // device recovers; nothing was lost, the log holds every change.
            synchronized (this) {
                closing = false;
            }
            // The last checkpoint may have left a superblock saying clean: not clean again now if
            // the device permits, else before the next record (healIfNeeded).
            try {
                installs.unmarkClean();
            } catch (RuntimeException e) {
                // the device still fails: the next write or install tries again, or fails with it
            }
            flusher.restart();
            String msg = "the store on " + heap.device().name() + " could not close: its last install or checkpoint failed ("
                    + failed.getMessage() + "); it stays open, and close() may be called again";
            throw failed instanceof StoreFullException ? new StoreFullException(msg, failed) : new HtodException(msg, failed);
        }
        closed = true;
        mob.close();
        log.close();
        HtodException f = flusher.failure();
        boolean uninstalled = !mob.isEmpty();
        try {
            storage.closeDevice();
        } finally {
            letGo();
        }
        if (f != null && uninstalled) {
            String msg = "the store on " + heap.device().name() + " closed without installing every change ("
                    + f.getMessage() + "); the next open recovers them from the log";
            throw f instanceof StoreFullException ? new StoreFullException(msg, f) : new HtodException(msg, f);
        }
    }

    /**
     * After a close that failed and left the layer open: ends the flusher and closes the device
     * without installing what is buffered. For a store whose every change another file holds now
     * (an online compaction's, renamed over this one's name), so that this one, superseded, is
     * not left in service.
     */
    public void abandon() throws InterruptedException {
        synchronized (this) {
            closing = true;
        }
        flusher.interruptAndJoin();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        mob.close();
        log.close();
        try {
            storage.closeDevice();
        } finally {
            letGo();
        }
    }

    /**
     * Closed: lets go of what is buffered in memory, the changes (which the log holds after a
     * failure) and the tables' caches; the log let go of its buffers at its close. A closed store
     * that an application still refers to (or a map of it) kept all of it.
     */
    private void letGo() {
        mob.forget();
        tables.dropCaches();
    }

    /** Whether {@link #close} has closed the device (a close that failed and may be retried has not). */
    public boolean isClosed() {
        return closed;
    }
}
