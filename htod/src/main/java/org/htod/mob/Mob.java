package org.htod.mob;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;
import org.htod.core.HtodException;
import org.htod.core.log.Log;

/**
 * The modified-object buffer (thesis 001): the changes the log holds and the tables do not yet,
 * one per key, the latest. Reads look here before the tables; the flusher installs the oldest
 * first and removes what it installed. Bounded by bytes: writers wait for room (back-pressure).
 *
 * <p>Locks: a key's changes are made, and taken and removed from the map by the flusher, with
 * the key's stripe lock held ({@link #lock}); a key's decided state is one immutable {@link
 * Value}, read without a lock. {@link #queue} orders the keys by the oldest record not yet
 * installed, so its first element says where the log must still be kept from; a key installed
 * leaves it just after its batch's stripe locks, under the install lock ({@link #dequeueLeft}).
 * Room is waited for on this object's monitor.
 */
final class Mob {
    /**
     * Stripe locks: a writer at SYNC holds its key's stripe through its group commit, so a writer
     * whose stripe another holds waits a whole commit and joins the group after. With 64 writers
     * one in five found its stripe held at 256 stripes; at 1,024, one in seventeen. Counted with a
     * 1 ms sync (64 writers, random keys): 46 to 50 records a group commit at 256, 54 to 57 at
     * 1,024, 54 to 58 at 4,096. Each lock is about 48 bytes.
     */
    private static final int STRIPES = 1024;
    /** Shift that takes a 64-bit mix of the key's hash to a stripe index: log2(STRIPES) top bits. */
    private static final int STRIPE_SHIFT = 64 - Integer.numberOfTrailingZeros(STRIPES);
    /**
     * Bytes counted per key beyond its key's and value's bytes: the objects that hold a key in
     * the buffer, with compressed references: its {@link Pending}, {@link Key} and {@link Value},
     * its nodes in the map and in the queue's skip list, and the headers of its key and value
     * arrays. Measured on Java 17: 279 bytes a key for the objects (500,000 keys put into a
     * buffer, the heap's use compared after a collection before and after), and 32 for the two
     * array headers. 160, counted before, left out the nodes and the headers: a buffer of small
     * values took nearly twice the memory it was given.
     */
    private static final int OVERHEAD = 312;
    static final int UNKNOWN = -1;

    /**
     * A key's decided state: its value ({@code null}: removed), expiry and version; for a placed
     * value, the heap block its writer wrote the entry to and the entry's head CRC ({@code placed}
     * 0 otherwise). Immutable.
     */
    record Value(byte[] value, long expiry, long version, long placed, int placedHeadCrc) {
        Value(byte[] value, long expiry, long version) {
            this(value, expiry, version, 0, 0);
        }

        boolean isRemove() {
            return value == null;
        }

        boolean liveAt(long now) {
            return value != null && (expiry == 0 || expiry > now);
        }
    }

    /** A key in the buffer. Fields other than {@link #current} are guarded by the key's stripe lock. */
    static final class Pending {
        final long tableId;
        final byte[] key;
        final long hash;
        final long seq;
        /** Its key in the buffer's map, kept so that the flusher's removal hashes the key no more. */
        private final Key mapKey;
        volatile Value current;
        /** Position of the oldest record of this key the tables do not hold yet. */
        long firstLsn;
        /** Position of the newest record of this key. */
        long lastLsn;
        /** The log generation {@link #lastLsn} was appended in ({@link Log.Appended}): whether a failure dropped it. */
        long lastGeneration;
        /** Whether the table holds an entry of the key (expired or not): 1, 0, or {@link #UNKNOWN} after a replay. */
        int inTable;
        /** While the flusher installs it: the newest record it took; else -1. */
        long taken = -1;
        /** The first record that came after the flusher took it, -1 if none. */
        long firstAfterTaken = -1;
        /** The log generation of {@link #firstAfterTaken} ({@link Log.Appended}). */
        long firstAfterTakenGeneration;
        /** Records absorbed into this key's state since it entered the buffer. */
        long absorbed;
        /** Installed and out of the map, waiting to be taken off the queue ({@link #dequeueLeft}). */
        boolean left;

        Pending(long tableId, byte[] key, long hash, long seq) {
            this(Key.of(tableId, key), hash, seq);
        }

        private Pending(Key mapKey, long hash, long seq) {
            this.tableId = mapKey.tableId();
            this.key = mapKey.key();
            this.hash = hash;
            this.seq = seq;
            this.mapKey = mapKey;
        }

        int bytes() {
            Value v = current;
            return bytesOf(key, v == null ? null : v.value);
        }

        /** This key's contribution to its map's size beyond the table's count. */
        int delta() {
            int t = inTable == UNKNOWN ? 0 : inTable;
            return (current.isRemove() ? 0 : 1) - t;
        }
    }

    /** What a key with {@code value} ({@code null}: removed) counts in the buffer. */
    static int bytesOf(byte[] key, byte[] value) {
        return key.length + (value == null ? 0 : value.length) + OVERHEAD;
    }

    /** A map's key, compared by content. */
    private record Key(long tableId, byte[] key, int hash) {
        static Key of(long tableId, byte[] key) {
            return new Key(tableId, key, Long.hashCode(tableId) * 31 + Arrays.hashCode(key));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.tableId == tableId && Arrays.equals(k.key, key);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private final ConcurrentHashMap<Key, Pending> map = new ConcurrentHashMap<>();
    /**
     * Keys in {@link #map}, never fewer: raised before a key enters it and lowered after the key
     * leaves it ({@link #installed}, once the table holds its change). So when it reads 0 the map
     * is empty at that moment, and {@link #get} answers null without hashing the key, as a lookup
     * made then would. Not {@code map.isEmpty()}: the map counts in striped cells summed without a
     * lock, so a read racing an insertion and a removal of two other keys can sum to 0 while a
     * third is there; one atomic counter reads what the operations finished before it made.
     */
    private final AtomicLong present = new AtomicLong();
    private final ConcurrentSkipListSet<Pending> queue = new ConcurrentSkipListSet<>(Mob::oldestFirst);
    private final ConcurrentHashMap<Long, LongAdder> deltas = new ConcurrentHashMap<>();
    /**
     * Told of the block of each placed value that a later change replaced before the flusher took
     * it; null while a recovery replays the log (whose replaced blocks were never taken back).
     */
    private volatile ReplacedBlocks replacedPlaced;
    /** Whether a failure dropped the record at a position of a generation ({@code Log.dropped}); null during a replay. */
    private volatile DroppedRecords droppedRecords;

    /** Whether a failed log write dropped the record at {@code lsn}, appended in generation {@code generation}. */
    interface DroppedRecords {
        boolean dropped(long lsn, long generation);
    }
    /** Per map, its keys whose {@link Pending#inTable} is {@link #UNKNOWN}: a size resolves them only while some are. */
    private final ConcurrentHashMap<Long, LongAdder> unknowns = new ConcurrentHashMap<>();
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong seq = new AtomicLong();
    private final LongAdder buffered = new LongAdder();
    private final LongAdder absorbed = new LongAdder();
    private final long capacity;
    private volatile boolean closed;

    Mob(long capacity) {
        this.capacity = capacity;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    /**
     * The order of {@link #queue}: by the oldest record not installed, then by arrival. One
     * method, not a chain of key-extracting comparators: the flusher's removals compare a key
     * against a few dozen others each.
     */
    private static int oldestFirst(Pending a, Pending b) {
        int c = Long.compare(a.firstLsn, b.firstLsn);
        return c != 0 ? c : Long.compare(a.seq, b.seq);
    }

    /** The lock of a key's stripe. */
    ReentrantLock lock(long tableId, long hash) {
        return stripes[stripe(tableId, hash)];
    }

    /** The index of a key's stripe: the order in which a batch takes the locks of its keys. */
    int stripe(long tableId, long hash) {
        return (int) ((hash ^ tableId * 0x9E3779B97F4A7C15L) >>> STRIPE_SHIFT);
    }

    /**
     * Runs {@code action} on each of {@code keys} (by its index) with the key's stripe lock held,
     * for the flusher and the heal's relog. Each stripe is locked once for all its keys, and stripes free now come
     * first: a writer at durability SYNC holds its stripe through its group commit, and a flusher
     * that waited for each such stripe in turn, twice a key, waited for hundreds of commits a
     * batch, while the buffer filled and writers queued for room instead of for the log. The
     * stripes busy at the first try are waited for afterwards, when most are free again.
     */
    void eachUnderLock(List<Pending> keys, IntConsumer action) {
        eachUnderLock(lockOrder(keys), action);
    }

    /**
     * The order in which {@link #eachUnderLock(long[], IntConsumer)} visits {@code keys}: the
     * stripe in the high half, the key's index in the low, sorted, each stripe's keys together.
     * The flusher sorts a batch once for its two passes.
     */
    long[] lockOrder(List<Pending> keys) {
        int n = keys.size();
        long[] order = new long[n];
        for (int i = 0; i < n; i++) {
            Pending p = keys.get(i);
            order[i] = (long) stripe(p.tableId, p.hash) << 32 | i;
        }
        Arrays.sort(order);
        return order;
    }

    /** {@link #eachUnderLock(List, IntConsumer)} in an order from {@link #lockOrder}. */
    void eachUnderLock(long[] order, IntConsumer action) {
        int n = order.length;
        List<int[]> busy = new ArrayList<>(); // {first, end} positions in order of a stripe not taken at the first try
        for (int from = 0; from < n;) {
            int to = from + 1;
            while (to < n && order[to] >>> 32 == order[from] >>> 32) {
                to++;
            }
            ReentrantLock l = stripes[(int) (order[from] >>> 32)];
            if (l.tryLock()) {
                runEach(l, order, from, to, action);
            } else {
                busy.add(new int[] {from, to});
            }
            from = to;
        }
        for (int[] r : busy) {
            ReentrantLock l = stripes[(int) (order[r[0]] >>> 32)];
            l.lock();
            runEach(l, order, r[0], r[1], action);
        }
    }

    /** Runs {@code action} on the indexes in {@code order[from, to)}, then releases {@code held}. */
    private static void runEach(ReentrantLock held, long[] order, int from, int to, IntConsumer action) {
        try {
            for (int j = from; j < to; j++) {
                action.accept((int) order[j]);
            }
        } finally {
            held.unlock();
        }
    }

    /** Whether the calling thread holds a stripe lock (it runs a compute function, say). */
    boolean holdsAnyLock() {
        for (ReentrantLock l : stripes) {
            if (l.isHeldByCurrentThread()) {
                return true;
            }
        }
        return false;
    }

    /** The key's change in the buffer, or null; no lock (a settled store's gets find it empty). */
    Pending get(long tableId, byte[] key) {
        if (present.get() == 0) {
            return null;
        }
        return map.get(Key.of(tableId, key));
    }

    /**
     * Records a change of a key, logged at {@code lsn} in the log's generation {@code generation}
     * ({@link Log.Appended}); the caller holds the key's stripe lock. {@code inTable} says whether
     * the table holds an entry of the key, for a key new to the buffer.
     */
    void put(long tableId, byte[] key, long hash, Value v, long lsn, long generation, int inTable) {
        put(tableId, key, hash, v, lsn, generation, inTable, 0);
    }

    /** {@link #put(long, byte[], long, Value, long, long, int)} of a change that reserved {@code reserved} bytes. */
    void put(long tableId, byte[] key, long hash, Value v, long lsn, long generation, int inTable, long reserved) {
        Key k = Key.of(tableId, key);
        Pending p = map.get(k);
        buffered.increment();
        if (p == null) {
            p = new Pending(k, hash, seq.incrementAndGet());
            p.current = v;
            p.firstLsn = lsn;
            p.lastLsn = lsn;
            p.lastGeneration = generation;
            p.inTable = inTable;
            queue.add(p);
            present.incrementAndGet(); // before the key is in the map: see present
            map.put(k, p);
            count(p.bytes() - reserved);
            delta(tableId).add(p.delta());
            if (inTable == UNKNOWN) {
                unknowns(tableId).increment();
            }
            return;
        }
        int oldBytes = p.bytes();
        int oldDelta = p.delta();
        Value old = p.current;
        // A placed value replaced before the flusher took it will never be installed: its block
        // goes back once this change's record is durable (see WriteLayer's placed values). One the
        // flusher took and installs now stays; so does one logged again with the same block.
        // The first change since the flusher took the key (whose taken state it installs now).
        boolean firstSinceTaken = p.taken >= 0 && p.firstAfterTaken < 0;
        ReplacedBlocks onReplaced = replacedPlaced;
        if (onReplaced != null && old.placed != 0 && old.placed != v.placed && !firstSinceTaken) {
            onReplaced.add(old.placed, lsn, generation);
        }
        p.current = v;
        DroppedRecords d = droppedRecords;
        if (generation != p.lastGeneration && p.taken < 0 && d != null && d.dropped(p.lastLsn, p.lastGeneration)) {
            // The key's newest record was dropped by a failure (and its first the tables lack
            // too, unless that one was durable before): this record, appended since the heal by a
            // writer that held the append guard across it, so that the heal's relog passed the
            // key by, holds the key's whole state, and the log is kept from here for it. Kept from
            // a dropped position, which the healed log fills with other records, a checkpoint
            // named that as where replay begins (inside another record: an open refused as
            // damage) or, the oldest key being another, a position past this record (lost).
            queue.remove(p);
            p.firstLsn = lsn;
            queue.add(p);
        }
        if (generation != p.lastGeneration || lsn > p.lastLsn) {
            p.lastLsn = lsn; // a heal lays records anew from an earlier position: the generation tells
            p.lastGeneration = generation;
        }
        if (firstSinceTaken) {
            p.firstAfterTaken = lsn;
            p.firstAfterTakenGeneration = generation;
        }
        p.absorbed++;
        absorbed.increment();
        count(p.bytes() - oldBytes - reserved);
        delta(tableId).add(p.delta() - oldDelta);
    }

    /** Adds {@code n} to the bytes counted; nothing for 0, a change whose reservation was exact (one atomic write a change, not two). */
    private void count(long n) {
        if (n != 0) {
            bytes.addAndGet(n);
        }
    }

    private LongAdder delta(long tableId) {
        return deltas.computeIfAbsent(tableId, t -> new LongAdder());
    }

    private LongAdder unknowns(long tableId) {
        return unknowns.computeIfAbsent(tableId, t -> new LongAdder());
    }

    /** Keys in the buffer beyond what a map's table counts (a key only here +1, removed here but in the table -1). */
    long delta(long tableIdOf, boolean resolve, java.util.function.Predicate<Pending> inTable) {
        // Only while the map has keys of unknown standing (after a replay): else a size would walk
        // the whole buffer, every map's keys, for each map it is asked of.
        LongAdder unknown = unknowns.get(tableIdOf);
        if (resolve && unknown != null && unknown.sum() > 0) {
            for (Pending p : map.values()) {
                if (p.tableId == tableIdOf && p.inTable == UNKNOWN) {
                    ReentrantLock l = lock(p.tableId, p.hash);
                    l.lock();
                    try {
                        if (p.inTable == UNKNOWN && map.get(p.mapKey) == p) {
                            int before = p.delta();
                            p.inTable = inTable.test(p) ? 1 : 0;
                            delta(p.tableId).add(p.delta() - before);
                            unknown.decrement();
                        }
                    } finally {
                        l.unlock();
                    }
                }
            }
        }
        LongAdder d = deltas.get(tableIdOf);
        return d == null ? 0 : d.sum();
    }

    /** From now on, {@code r} is told of each placed value replaced before its install (see {@link #put}). */
    void onReplacedPlaced(ReplacedBlocks r) {
        replacedPlaced = r;
    }

    /** From now on, {@link #put} asks {@code d} whether a key's newest record was dropped (see there). */
    void whenDropped(DroppedRecords d) {
        droppedRecords = d;
    }

    /** Up to {@code max} keys not being installed, oldest record first. */
    List<Pending> oldest(int max, long maxBytes) {
        List<Pending> out = new ArrayList<>();
        long total = 0;
        for (Pending p : queue) {
            if (out.size() >= max || total >= maxBytes) {
                break;
            }
            if (p.taken < 0) {
                out.add(p);
                total += p.bytes();
            }
        }
        return out;
    }

    /**
     * Up to {@code max} keys not being installed whose change is a removal, oldest record first:
     * what an install can still take when the heap has no room for the oldest keys' new entries.
     */
    List<Pending> removals(int max) {
        List<Pending> out = new ArrayList<>();
        for (Pending p : queue) {
            if (out.size() >= max) {
                break;
            }
            if (p.taken < 0 && p.current.isRemove()) {
                out.add(p);
            }
        }
        return out;
    }

    /** The flusher takes a key to install its current state; the caller holds its stripe lock. */
    Value take(Pending p) {
        p.taken = p.lastLsn;
        p.firstAfterTaken = -1;
        return p.current;
    }

    /**
     * The state the flusher took is installed and durable in the log's install record; the key
     * leaves the buffer, unless a newer change came meanwhile. The caller holds its stripe lock.
     * A key that left is taken off the queue by {@link #dequeueLeft}, which the caller runs next.
     */
    void installed(Pending p, Value took) {
        int oldDelta = p.delta();
        int tableHolds = took.isRemove() ? 0 : 1;
        if (p.inTable == UNKNOWN) {
            unknowns(p.tableId).decrement(); // known from now on, or gone
        }
        if (p.lastLsn == p.taken) {
            if (map.remove(p.mapKey, p)) {
                present.decrementAndGet(); // after the key left the map: see present
            }
            p.left = true;
            bytes.addAndGet(-p.bytes());
            delta(p.tableId).add(-oldDelta);
            return; // the room it made is announced once for the batch: see roomMade
        }
        queue.remove(p);
        p.firstLsn = p.firstAfterTaken;
        p.inTable = tableHolds;
        p.taken = -1;
        p.firstAfterTaken = -1;
        queue.add(p);
        delta(p.tableId).add(p.delta() - oldDelta);
    }

    /**
     * Takes the keys of {@code batch} that left the buffer ({@link #installed}) off the queue, in
     * the queue's order as {@link #oldest} listed them, after the batch's stripe locks: each is
     * then at the queue's head or near it, so that each removal's search meets the nodes the last
     * one touched, still in the processor's cache, where removals in stripe order reached nodes all
     * over the skip list (about 7% of the flusher's processor time at 64 writers of 200-byte
     * values). Until then such a key stays queued and taken, so no batch takes it again, and
     * {@link #minFirstLsn} may name its first record: older than need be, never newer. The thread
     * that ran {@link #installed}, still under the install lock.
     */
    void dequeueLeft(List<Pending> batch) {
        for (Pending p : batch) {
            if (p.left) {
                queue.remove(p);
            }
        }
    }

    /**
     * Wakes the writers waiting for room, after the flusher released a batch's keys: once a batch,
     * not once a key, since each call wakes every waiter, and with the buffer full a batch of 4,096
     * keys woke each of dozens of writers thousands of times while the flusher held a stripe.
     */
    synchronized void roomMade() {
        notifyAll();
    }

    /**
     * A failed log write dropped the key's newest record, and its state was logged again, in the
     * log's generation {@code generation}: in the record at {@code firstLsn} or in a relog unit
     * from there to the part at {@code lastLsn} (the same position for one record). That holds the
     * key's whole state, so the log is kept from the unit's first part for this key: the log lays
     * out anew what follows the dropped records, where an earlier position may no longer begin a
     * record, and a checkpoint that names such a position as where replay begins cannot be
     * replayed; nor may replay begin inside a unit, which it would read in part. The key's change
     * counts as durable once the unit's last part is. The caller holds the key's stripe lock; the
     * flusher has not taken the key.
     */
    void relogged(Pending p, long firstLsn, long lastLsn, long generation) {
        p.lastLsn = lastLsn;
        p.lastGeneration = generation;
        queue.remove(p);
        p.firstLsn = firstLsn;
        queue.add(p);
    }

    /**
     * The install of a key taken by the flusher failed: it stays, as it is, for the next one.
     * {@code unlinkedPlaced}: the placed block of the state it took, if the install failed before
     * linking it, unrecorded again; else 0. If the key changed since it was taken, no install to
     * come takes that block (they take the newer state): it goes back as a replaced value's block
     * does, once the record of the change that replaced it is durable. (When the change came, the
     * block was left out of the replaced ones, as the install was to link it.)
     */
    void abandoned(Pending p, long unlinkedPlaced) {
        ReplacedBlocks onReplaced = replacedPlaced;
        if (unlinkedPlaced != 0 && p.firstAfterTaken >= 0 && p.current.placed != unlinkedPlaced
                && onReplaced != null) {
            onReplaced.add(unlinkedPlaced, p.firstAfterTaken, p.firstAfterTakenGeneration);
        }
        p.taken = -1;
        p.firstAfterTaken = -1;
        // The failed install may have linked the key in the table's memory before it failed (its
        // links wait for the next commit): whether the table holds it is looked up again.
        int before = p.delta();
        if (p.inTable != UNKNOWN) {
            unknowns(p.tableId).increment(); // a size resolves it again
        }
        p.inTable = UNKNOWN;
        delta(p.tableId).add(p.delta() - before);
    }

    /** The position the log must be kept from: the oldest record not installed, or {@code otherwise}. */
    long minFirstLsn(long otherwise) {
        try {
            return Math.min(queue.first().firstLsn, otherwise);
        } catch (java.util.NoSuchElementException e) {
            return otherwise;
        }
    }

    /** Why the flusher cannot empty the buffer now; a writer that needs room gets it instead of waiting. */
    private volatile HtodException stalled;
    /** Failures so far: a waiter gives up only on a try begun after it began to wait, the second since (see {@code Log.stall}). */
    private long stalls;
    /** Writers that waited for room (back-pressure: the flusher behind the writers), and the nanoseconds they waited. */
    private long roomWaits;
    private long roomWaitNanos;

    /** See {@link #stalled}; null when the flusher works again. Wakes every waiter. */
    synchronized void stall(HtodException why) {
        stalled = why;
        if (why != null) {
            stalls++;
        }
        notifyAll();
    }

    /**
     * Counts {@code n} bytes for a change about to be logged, if they fit or the buffer is empty
     * (one change larger than the buffer still goes in, alone); else counts nothing and answers
     * false, and the writer waits for room ({@link #awaitRoom}) with its locks released. The bound
     * holds because a change is counted before it is logged: a wait for room before deciding,
     * alone, let every writer that passed it at once add its value after (64 writers of 2 MB
     * values held 185 MiB in a 64 MiB buffer). The count is made exact by {@link #put}, or given
     * back by {@link #unreserve} if the change is not made. A removal ({@code freeing}) may go
     * past the bound by {@link #freeingRoom}.
     */
    boolean tryReserve(long n, boolean freeing) {
        long limit = limit(freeing);
        while (true) {
            long b = bytes.get();
            if (b > 0 && b + n > limit) {
                return false;
            }
            if (bytes.compareAndSet(b, b + n)) {
                return true;
            }
        }
    }

    /**
     * Bytes beyond the bound that removals may take: a buffer full of puts that the heap has no
     * room for (the store full) would otherwise refuse the removals that make that room, since a
     * removal of a key the tables hold adds a key to the buffer. A quarter of the bound: puts
     * never take it, so the buffer holds at most that much more than its size, in keys removed,
     * which the flusher installs even when the heap takes no new entry.
     */
    long freeingRoom() {
        return capacity / 4;
    }

    private long limit(boolean freeing) {
        return freeing ? capacity + freeingRoom() : capacity;
    }

    /** Gives back bytes {@link #tryReserve} counted for a change that was not made. */
    void unreserve(long n) {
        if (n != 0) {
            bytes.addAndGet(-n);
        }
    }

    /**
     * Waits until {@code n} more bytes of a decided change fit, or the buffer is empty (one
     * change larger than the buffer still goes in); a removal ({@code freeing}) counts the room
     * beyond the bound that removals may take.
     */
    void awaitRoom(long n, boolean freeing) {
        awaitRoom(n, limit(freeing), true);
    }

    /**
     * Waits, before a writer decides its change, until {@code n} bytes (an estimate) fit, or until
     * the flusher fails: the change may then be a removal, which must not be refused with the
     * flusher's error while it could go in (see {@link #freeingRoom}); the reservation that
     * follows the decision holds the bound. Waiting here first keeps a writer from deciding twice
     * when the flusher is merely behind.
     */
    void awaitRoomBeforeDeciding(long n) {
        awaitRoom(n, capacity, false);
    }

    private void awaitRoom(long n, long limit, boolean decided) {
        if (bytes.get() + n <= limit) {
            return;
        }
        synchronized (this) {
            long seen = stalls;
            long began = 0;
            try {
                while (!closed && bytes.get() > 0 && bytes.get() + n > limit) {
                    HtodException why = stalled;
                    if (why != null && !decided) {
                        return;
                    }
                    if (why != null && stalls - seen >= 2) {
                        String msg = "the write buffer is full and the flusher cannot empty it now (" + why.getMessage()
                                + "); nothing was written for this change, reads go on, and writes resume once it can";
                        throw why instanceof org.htod.core.StoreFullException
                                ? new org.htod.core.StoreFullException(msg, why) : new HtodException(msg, why);
                    }
                    if (began == 0) {
                        began = System.nanoTime();
                    }
                    try {
                        wait(100);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new HtodException("interrupted while waiting for room in the write buffer", e);
                    }
                }
            } finally {
                if (began != 0) {
                    roomWaits++;
                    roomWaitNanos += System.nanoTime() - began;
                }
            }
        }
    }

    /** Writers that waited for room in the buffer so far, and the nanoseconds they waited in all. */
    synchronized long[] roomWaits() {
        return new long[] {roomWaits, roomWaitNanos};
    }

    /**
     * The keys of a map in the buffer, for its iterators: each key once. The map's own walk is not
     * enough: a key that leaves (installed) and comes back (put again) while the walk is inside its
     * bin is met a second time at the bin's end, and a map's iteration returned the key twice (eight
     * writers and two iterating readers: 3 runs in about 110). Of two changes of one key, the one
     * the buffer holds when the walk meets the second wins.
     */
    List<Pending> of(long tableId) {
        Map<Key, Pending> out = new HashMap<>();
        for (Map.Entry<Key, Pending> e : map.entrySet()) {
            Key k = e.getKey();
            if (k.tableId == tableId) {
                Pending before = out.putIfAbsent(k, e.getValue());
                if (before != null && map.get(k) != before) {
                    out.put(k, e.getValue());
                }
            }
        }
        return new ArrayList<>(out.values());
    }

    boolean isEmpty() {
        return map.isEmpty();
    }

    /** Every key in the buffer; consistent only while no writer changes it (see {@link WriteLayer#copyFrozen}). */
    List<Pending> all() {
        return new ArrayList<>(map.values());
    }

    int keys() {
        return map.size();
    }

    long bytes() {
        return bytes.get();
    }

    long capacity() {
        return capacity;
    }

    /** Changes buffered, and changes absorbed by a later change of the same key before its install. */
    long[] counts() {
        return new long[] {buffered.sum(), absorbed.sum()};
    }

    void close() {
        closed = true;
        synchronized (this) {
            notifyAll();
        }
    }

    /**
     * After the write layer closed, once nothing reads the buffer again: lets go of every change it
     * holds (none after a clean close; after a failure, changes the log holds for the next open),
     * which a closed store that an application still refers to kept.
     */
    void forget() {
        map.clear();
        queue.clear();
        deltas.clear();
        unknowns.clear();
        present.set(0);
        bytes.set(0);
    }
}
