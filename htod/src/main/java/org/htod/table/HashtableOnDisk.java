package org.htod.table;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongSupplier;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.alloc.Heap;

/**
 * A hashtable on disk (the core paper's HTOD): a header, a bucket array of entry handles, and
 * per bucket a chain of entries, each a heap block; hashing by doubling, restartable.
 *
 * <h2>Write order (direct mode)</h2>
 *
 * Every link (a bucket slot or an entry's {@code next}) that is durable points at an entry that
 * is durable, allocated and whole. Three rules keep it so across any crash:
 *
 * <ol>
 *   <li>A new entry is written complete (its {@code next} already the successor it will have),
 *       and only linked after a sync that covers it: the link, one aligned 8-byte write of the
 *       slot or of the predecessor's {@code next}, waits in memory in the {@link SyncGate}, where
 *       readers see it, until a flush writes it after one sync for all the links that wait. A
 *       crash can thus never make a link durable without its entry, which would lose the rest of
 *       the chain behind it.
 *   <li>An entry that a replacement or removal unlinks is freed only after a sync that follows
 *       the write of the unlinking link ({@link SyncGate#retire}), so that no durable link ever
 *       points at a block the allocator may reuse.
 *   <li>With {@code syncEachWrite} (durability SYNC), the operation flushes its link and syncs it
 *       before it returns (concurrent operations share the flush); without it, links are flushed
 *       when {@link TableOptions#maxPendingLinks} wait, and become durable at the next sync.
 * </ol>
 *
 * <h2>Concurrency</h2>
 *
 * Keys are spread over {@value #STRIPES} stripes by the low bits of their hash; the bucket array
 * never has fewer buckets than stripes, so a bucket, in the old array or the new one during a
 * doubling, belongs to exactly one stripe. Each stripe has a writer lock, held by one writer
 * through its whole operation (syncs included), and a view lock: readers take its read side, and
 * writers take its write side only around the writes that change what readers see (a link and
 * the count). Readers therefore never block each other and wait for a writer only for the length
 * of a link's update in memory (or of its write, by a flush). A flush writes a stripe's links
 * under its view write lock, holding no writer lock, so writers too read their chain under the
 * view's read lock ({@link #findForWrite}). Writers of different stripes run in parallel; the
 * heap serialises allocation. The doubler takes every writer lock for one batch of buckets at a
 * time, and every view lock only while it publishes the batch.
 */
public final class HashtableOnDisk implements TableReader, TableWriter {
    static final int STRIPES = BucketArray.MIN_BUCKETS;
    /** Doubling starts when entries exceed this share of the buckets: 0.75. */
    public static final int DEFAULT_LOAD_PERMILLE = 750;
    /** Bytes of the heap's block header before each payload (see the heap block header in FORMAT.md). */
    static final int BLOCK_HEADER = 48;
    /** Largest key of an entry, in bytes. */
    public static final int MAX_KEY = Entries.MAX_KEY;
    /** Largest value of an entry, in bytes. */
    public static final int MAX_VALUE = Entries.MAX_VALUE;

    final Heap heap;
    final SyncGate gate;
    final long header;
    final long tableId;
    /** The function of this table's keys, from its header: never changes. */
    final TableHash hashing;
    final String name;
    final int loadPermille;
    final boolean syncEachWrite;
    final int doublingMinBatch;
    final LongSupplier clock;
    volatile Shape shape;
    final AtomicLong count;
    /** Reads and checks this table's entries. */
    final EntryLoader entries;
    final ReentrantLock[] writers = new ReentrantLock[STRIPES];
    final ReentrantReadWriteLock[] views = new ReentrantReadWriteLock[STRIPES];
    final ReentrantLock doubling = new ReentrantLock();
    /**
     * Direct mode: a doubling batch that failed between naming its range moved and closing it,
     * which every reader and writer finishes before it uses the table (see {@link
     * Doubler.Unfinished}); null otherwise. Changed with every writer lock held, and, when readers
     * must wait for it, every view lock too.
     */
    volatile Doubler.Unfinished unfinished;
    private final Object headerLock = new Object();
    private long headerSequence;
    /** The count the header holds; -1 after a header write failed, when it may hold another shape too. */
    private long countInHeader;
    private volatile boolean closed;

    private HashtableOnDisk(Heap heap, SyncGate gate, long header, TableHeader.State st, Shape shape, String name,
            TableOptions options) {
        this.heap = heap;
        this.gate = gate;
        this.header = header;
        this.tableId = st.tableId();
        this.hashing = st.hash();
        this.loadPermille = st.loadPermille();
        this.headerSequence = st.sequence();
        this.count = new AtomicLong(st.entryCount());
        this.countInHeader = st.entryCount();
        this.shape = shape;
        this.name = name;
        this.syncEachWrite = options.syncEachWrite();
        this.clock = options.clock();
        this.doublingMinBatch = options.doublingMinBatch();
        this.entries = new EntryLoader(heap, gate, tableId, name);
        for (int i = 0; i < STRIPES; i++) {
            writers[i] = new ReentrantLock();
            views[i] = new ReentrantReadWriteLock();
        }
    }

    /** A table just written: its header handle and its id. */
    record Created(long header, long tableId) {}

    /**
     * Writes a new, empty table (bucket array and header) hashing with {@code hash}: a {@link
     * TableHash#fresh} key for every table the store creates (tests give one they chose, or the
     * version-1 function). Nothing refers to it yet; the caller syncs before linking it anywhere.
     */
    static Created create(Heap heap, SlotCache slots, int loadPermille, TableHash hash) {
        if (loadPermille < 100 || loadPermille > 10_000) {
            throw new IllegalArgumentException("load factor must be between 0.1 and 10, found " + loadPermille / 1000.0);
        }
        BucketArray a = BucketArray.allocate(heap, BucketArray.MIN_BUCKETS, slots);
        long id;
        SecureRandom r = new SecureRandom();
        do {
            id = r.nextLong();
        } while (id == 0);
        return new Created(TableHeader.create(heap, new TableHeader.State(1, id, a.directory, 0, loadPermille, 0, 0, 0, hash)), id);
    }

    /**
     * Opens the table whose header block is {@code header}; {@code clean} when the store was
     * closed cleanly, so that a damaged header slot is reported rather than taken for a torn write.
     */
    static HashtableOnDisk open(Heap heap, SyncGate gate, long header, String name, TableOptions options,
            boolean clean) {
        TableHeader.State st = TableHeader.read(heap, header, clean);
        BucketArray a = BucketArray.load(heap, st.array(), gate.slots);
        Shape shape;
        if (st.doubling()) {
            BucketArray next = BucketArray.load(heap, st.newArray(), gate.slots);
            if (next.bucketCount != 2 * a.bucketCount || st.moved() > a.bucketCount || st.unzipFrom() > st.moved()
                    || st.unzipFrom() < 0) {
                long at = heap.address(header);
                throw new CorruptStoreException("table '" + name + "' header at offset " + at + " of "
                        + heap.device().name() + ": expected a doubling from " + a.bucketCount + " to "
                        + 2 * a.bucketCount + " buckets with 0 <= unzipFrom <= moved <= " + a.bucketCount + ", found "
                        + next.bucketCount + " buckets, unzipFrom " + st.unzipFrom() + ", moved " + st.moved(), at);
            }
            shape = new Shape(a, next, st.moved(), st.unzipFrom());
        } else {
            shape = new Shape(a);
        }
        if (st.loadPermille() < 100 || st.loadPermille() > 10_000 || st.entryCount() < 0) {
            long at = heap.address(header);
            throw new CorruptStoreException("table '" + name + "' header at offset " + at + " of " + heap.device().name()
                    + ": expected a load factor of 0.1..10 and a non-negative count, found " + st.loadPermille() / 1000.0
                    + " and " + st.entryCount(), at);
        }
        return new HashtableOnDisk(heap, gate, header, st, shape, name, options);
    }

    /**
     * Log mode: opens the table whose header block is {@code header} in the state {@code st} the
     * last checkpoint and the log give. The header, written at checkpoints, may be older than that
     * state: it is read for the table's identity only (a torn slot may be skipped).
     */
    static HashtableOnDisk openLogged(Heap heap, SyncGate gate, long header, String name, TableOptions options,
            InstallRecord.TableState st) {
        TableHeader.State h = TableHeader.read(heap, header, false);
        if (h.tableId() != st.tableId()) {
            long at = heap.address(header);
            throw new CorruptStoreException("table '" + name + "' header at offset " + at + " of " + heap.device().name()
                    + ": expected table id 0x" + Long.toHexString(st.tableId()) + " as the checkpoint and the log say, found"
                    + " 0x" + Long.toHexString(h.tableId()), at);
        }
        if (st.loadPermille() < 100 || st.loadPermille() > 10_000 || st.count() < 0) {
            // As a direct-mode open checks its header's: a load factor of 0, say, from a state
            // whose checksums hold, opened and then doubled the table without end.
            long at = heap.address(header);
            throw new CorruptStoreException("table '" + name + "' state in the checkpoint or the log, header at offset "
                    + at + " of " + heap.device().name() + ": expected a load factor of 0.1..10 and a non-negative"
                    + " count, found " + st.loadPermille() / 1000.0 + " and " + st.count(), at);
        }
        TableHeader.State fromLog = new TableHeader.State(h.sequence(), h.tableId(), st.array(), st.count(),
                st.loadPermille(), st.newArray(), st.moved(), st.moved(), h.hash());
        HashtableOnDisk t = new HashtableOnDisk(heap, gate, header, fromLog, new Shape(BucketArray.load(heap, st.array(), gate.slots)),
                name, options);
        t.restore(st);
        return t;
    }

    /** The hash of {@code key} in this table, which chooses its bucket and stripe, and which its entry stores. */
    public long hash(byte[] key) {
        return hashing.hash(key);
    }

    /** The table's hash function ({@link #hash}), for checks of placed entries made outside the table. */
    public TableHash hashing() {
        return hashing;
    }

    static int stripe(long hash) {
        return (int) (hash & (STRIPES - 1));
    }

    // ------------------------------------------------------------------ reading entries

    /** Damage in one of this table's blocks: what was expected there and what was found. */
    CorruptStoreException corrupt(long handle, String expected, String found) {
        return entries.corrupt(handle, expected, found);
    }

    /** Where a key is, or would be inserted, in a chain. */
    static final class Found {
        BucketArray array;
        long bucket;
        /** Slot value: the chain's first entry. */
        long first;
        /** Entry before {@link #entry}, 0 when it is the first. */
        long pred;
        /** Salt of the link that names {@link #entry} (or would name a new first entry): the predecessor's head CRC, or the bucket. */
        long predSalt;
        StoredEntry entry;
        /** Entries of the chain loaded to find it, and of those the ones the entry cache held (no device read). */
        int loaded;
        int loadedCached;
    }

    /** Finds {@code key} in its chain; the caller holds the stripe's writer lock or view lock. */
    Found find(Shape s, byte[] key, long hash, boolean withValue) {
        Found f = new Found();
        f.array = s.arrayOf(hash);
        f.bucket = hash & f.array.mask();
        f.first = slot(f.array, f.bucket);
        long pred = 0;
        long predSalt = f.bucket;
        long cur = f.first;
        long steps = 0;
        long limit = count.get() + 1024;
        while (cur != 0) {
            EntryLoader.Loaded e = entries.load(cur, withValue);
            f.loaded++;
            f.loadedCached += e.cached ? 1 : 0;
            entries.checkBucket(e, f.array, f.bucket);
            if (e.h.hash == hash && e.keyEquals(key)) {
                f.pred = pred;
                f.predSalt = predSalt;
                f.entry = entries.decode(e, withValue);
                return f;
            }
            pred = cur;
            predSalt = e.salt();
            cur = e.h.next;
            if (++steps > limit) {
                throw corrupt(f.first, "a chain of at most " + limit + " entries in bucket " + f.bucket,
                        "a longer one, or a cycle");
            }
        }
        f.predSalt = f.bucket; // absent: a new entry goes first, named by the slot
        return f;
    }

    /**
     * {@link #find} for a writer, who holds the stripe's writer lock: under the view's read lock
     * too, since a flush writes this stripe's links (and updates the cache) under the view's
     * write lock, not the writer lock, and a chain read in the middle of that could cache a stale
     * {@code next}.
     */
    Found findForWrite(Shape s, byte[] key, long hash, boolean withValue, int st) {
        Lock r = views[st].readLock();
        r.lock();
        try {
            return find(s, key, hash, withValue);
        } finally {
            r.unlock();
        }
    }

    // ------------------------------------------------------------------ reads

    void ensureOpen() {
        if (closed) {
            throw new StoreClosedException("table '" + name + "' of " + heap.device().name() + " is closed");
        }
    }

    /**
     * The entry of {@code key} as installed, with its value if {@code withValue}, or null; an
     * expired entry is returned as it is (the caller judges expiry) and never removed: a read that
     * writes nothing, for the write layer, whose writes all go through the log.
     */
    public StoredEntry read(byte[] key, boolean withValue) {
        ensureOpen();
        long hash = hash(key);
        Lock r = lockViewOrBeside(stripe(hash));
        try {
            Doubler.Unfinished u = unfinished;
            long[] kept = keptChain(u, hash);
            if (kept == null) {
                return find(shape, key, hash, withValue).entry;
            }
            int len = kept.length / 4;
            for (int j = 0; j < len; j++) {
                if (kept[len + j] == hash) {
                    EntryLoader.Loaded e = keptEntry(u, kept, j, withValue);
                    if (e.h.hash == hash && e.keyEquals(key)) {
                        return entries.decode(e, withValue);
                    }
                }
            }
            return null;
        } finally {
            r.unlock();
        }
    }

    /**
     * {@link #lockView}, or, where a doubling batch that failed in its unzip cannot be finished
     * (the device fails again, or the heap refuses changes after a failed sync until the store is
     * reopened), the view read lock of stripe {@code st} taken beside it: the batch's chains are
     * half relinked, every other chain is whole, and the batch's are read from the old chains it
     * kept ({@link #keptChain}). So reads and iteration go on, as they do after any device error.
     * Returns the lock, held; the caller holds no lock of this table.
     */
    Lock lockViewOrBeside(int st) {
        try {
            return lockView(st);
        } catch (HtodException cannotFinish) {
            Lock r = views[st].readLock();
            r.lock();
            return r;
        }
    }

    /**
     * The old chain, as a doubling batch cut in its unzip read it before it began ({@link
     * Doubler#readChain}'s layout), of the bucket that held the hashes {@code h mod n == c mod n}
     * ({@code n} the old size), if {@code u} is such a batch and moves that bucket; else null,
     * and the chain in the table is whole. Nothing has changed the old chain since it was read (no
     * writer runs until the batch is finished) and its entries are whole (the unzip writes only
     * their links). The caller holds the view read lock of the stripe of {@code c}, which keeps
     * the batch from being finished meanwhile.
     */
    long[] keptChain(Doubler.Unfinished u, long c) {
        if (u == null || !u.cut()) {
            return null;
        }
        long old = c & (u.s().n() - 1);
        if (old < u.from() || old >= u.from() + u.k()) {
            return null;
        }
        return u.chains().get((int) (old - u.from()));
    }

    /** Entry {@code j} of {@code kept}, an old chain of the batch {@code u}: loaded, and checked to hash to its bucket. */
    EntryLoader.Loaded keptEntry(Doubler.Unfinished u, long[] kept, int j, boolean withValue) {
        EntryLoader.Loaded e = entries.load(kept[j], withValue);
        entries.checkBucket(e, u.s().array, kept[kept.length / 4 + j] & (u.s().n() - 1));
        return e;
    }

    /**
     * Takes the view read lock of stripe {@code st} once no failed doubling batch has left the
     * chains half relinked, finishing one first (and throwing what stops that); returns the lock,
     * held. The caller holds no lock of this table.
     */
    Lock lockView(int st) {
        Lock r = views[st].readLock();
        r.lock();
        for (Doubler.Unfinished u = unfinished; u != null && u.cut(); u = unfinished) {
            r.unlock();
            Doubler.finishFailed(this);
            r.lock();
        }
        return r;
    }

    /**
     * Takes the writer lock of stripe {@code st} once no failed doubling batch is in the way,
     * finishing one first (and throwing what stops that); the caller holds no lock of this table.
     */
    private void lockWriter(int st) {
        while (true) {
            writers[st].lock();
            if (unfinished == null) {
                return;
            }
            writers[st].unlock();
            Doubler.finishFailed(this);
        }
    }

    /**
     * Whether the entry of {@code key} as installed (links waiting in memory included) is the
     * block {@code handle}: for the write layer, after a failed install, to tell a placed block it
     * linked from one it did not.
     */
    public boolean holds(byte[] key, long handle) {
        StoredEntry e = read(key, false);
        return e != null && e.handle == handle;
    }

    @Override
    public StoredEntry get(byte[] key) {
        return live(key, true);
    }

    @Override
    public boolean containsKey(byte[] key) {
        return live(key, false) != null;
    }

    /** {@link #read}, but an expired entry is removed (when its stripe is free) and reads as absent. */
    private StoredEntry live(byte[] key, boolean withValue) {
        StoredEntry e = read(key, withValue);
        if (e != null && e.expiredAt(clock)) {
            try {
                removeExpiredIfFree(key);
            } catch (HtodException notNow) {
                // Housekeeping only: a device that fails, a heap that refuses changes or a
                // doubling batch that cannot be finished keeps the dead entry for a later write
                // to remove; the read's answer stands.
            }
            return null;
        }
        return e;
    }

    @Override
    public long size() {
        ensureOpen();
        return count.get();
    }

    @Override
    public Iterator<StoredEntry> iterator(boolean withValues) {
        ensureOpen();
        return new TableCursor(this, withValues, false);
    }

    /** Every entry as installed, expired ones included: for the write layer, which judges expiry itself. */
    public Iterator<StoredEntry> iteratorWithExpired(boolean withValues) {
        ensureOpen();
        return new TableCursor(this, withValues, true);
    }

    /** The table's id, which log records name it by. */
    public long tableId() {
        return tableId;
    }

    // ------------------------------------------------------------------ writes

    /** The first entry of a bucket's chain, as readers must see it (a waiting link wins over the disk). */
    long slot(BucketArray array, long bucket) {
        SyncGate.Link l = gate.pendingLink(array.segment(bucket), array.offsetIn(bucket));
        return l != null ? l.target() : array.get(heap, bucket);
    }

    /**
     * Sets a link, a bucket slot or the predecessor's {@code next}, to be written by the next
     * flush; the caller holds the writer lock and the view write lock of stripe {@code st}.
     */
    void link(int st, BucketArray array, long bucket, long pred, long salt, long target) {
        if (pred == 0) {
            gate.setLink(array.segment(bucket), array.offsetIn(bucket), target, bucket, views[st], false);
        } else {
            gate.setLink(pred, Entries.NEXT_OFFSET, target, salt, views[st], true);
        }
    }

    static void checkSizes(byte[] key, byte[] value) {
        if (key.length > Entries.MAX_KEY || value.length > Entries.MAX_VALUE) {
            throw new IllegalArgumentException("an entry holds a key of at most " + Entries.MAX_KEY + " bytes and a value"
                    + " of at most " + Entries.MAX_VALUE + " bytes, found " + key.length + " and " + value.length);
        }
    }

    @Override
    public void update(byte[] key, Mutation mutation) {
        ensureOpen();
        long hash = hash(key);
        int st = stripe(hash);
        boolean inserted = false;
        boolean changed = false;
        if (writers[st].isHeldByCurrentThread()) {
            // A mutation (a compute function) writing the table it runs in: its own key's write
            // would run inside the first and leave the first working on a chain changed under it.
            throw new IllegalStateException("recursive update of table '" + name + "': a function given to compute,"
                    + " merge or a batch must not write the map it runs on");
        }
        lockWriter(st);
        try {
            ensureOpen();
            Found f = findForWrite(shape, key, hash, mutation.readsValue(), st);
            StoredEntry cur = f.entry;
            boolean expired = cur != null && cur.expiredAt(clock);
            Change c = mutation.apply(expired ? null : cur);
            if (c == null || c.isRemove()) {
                if (cur != null && (expired || c != null)) {
                    unlink(st, f);
                    changed = true;
                }
            } else {
                inserted = write(st, f, hash, key, c, expired);
                changed = true;
            }
        } finally {
            writers[st].unlock();
        }
        if (!changed && syncEachWrite) {
            gate.syncIfUnsynced(); // its answer is durable too
        }
        gate.flushIfFull();
        if (inserted) {
            maybeDouble();
        }
    }

    /**
     * Writes {@code c} as the new entry of {@code key}, whose current entry (perhaps {@code
     * expired}) was found at {@code f}; the caller holds the writer lock of stripe {@code st}.
     * Returns whether the key is new.
     */
    private boolean write(int st, Found f, long hash, byte[] key, Change c, boolean expired) {
        StoredEntry cur = f.entry;
        checkSizes(key, c.value);
        long version = c.version != 0 ? c.version : cur != null && !expired ? Change.after(cur.version) : 1;
        long next = cur != null ? cur.next : f.first;
        long pred = cur != null ? f.pred : 0;
        long salt = cur != null ? f.predSalt : f.bucket;
        long h = heap.allocate(Entries.encode(next, tableId, hash, version, c.expiry, key, c.value));
        gate.entriesWritten(1);
        Lock w = views[st].writeLock();
        w.lock();
        try {
            link(st, f.array, f.bucket, pred, salt, h);
            if (cur == null) {
                count.incrementAndGet();
                gate.touch(this);
            }
        } finally {
            w.unlock();
        }
        if (cur != null) {
            gate.retire(cur.handle);
        }
        if (syncEachWrite) {
            gate.sync();
        }
        return cur == null;
    }

    /**
     * A read's removal of the expired entry of {@code key}: made only if its stripe's writer lock
     * is free now and no failed doubling batch waits, else left for a later write or sweep. A read
     * may run inside a mutation (a function given to compute or merge reads the map), whose
     * thread holds a writer lock and a chain position it found before the function ran: a removal
     * in that chain then left the position stale, and the mutation's write linked its new entry
     * behind the removed one (lost, the old entry it replaced still linked and freed); and two
     * such functions, each reading an expired key of the other's stripe, waited for each other
     * for good. A reader never waits for a writer here.
     */
    private void removeExpiredIfFree(byte[] key) {
        ensureOpen();
        long hash = hash(key);
        int st = stripe(hash);
        ReentrantLock l = writers[st];
        if (l.isHeldByCurrentThread() || !l.tryLock()) {
            return;
        }
        try {
            if (closed || unfinished != null) {
                return;
            }
            Found f = findForWrite(shape, key, hash, false, st);
            if (f.entry == null || !f.entry.expiredAt(clock)) {
                return;
            }
            unlink(st, f);
        } finally {
            l.unlock();
        }
        gate.flushIfFull();
    }

    /** Removes the entry of {@code key} if it is there and expired; returns whether it did. */
    boolean removeExpired(byte[] key) {
        ensureOpen();
        long hash = hash(key);
        int st = stripe(hash);
        lockWriter(st);
        try {
            ensureOpen();
            Found f = findForWrite(shape, key, hash, false, st);
            if (f.entry == null || !f.entry.expiredAt(clock)) {
                return false;
            }
            unlink(st, f);
        } finally {
            writers[st].unlock();
        }
        gate.flushIfFull();
        return true;
    }

    /** Unlinks the entry {@code f} found; the caller holds the stripe's writer lock. */
    void unlink(int st, Found f) {
        Lock w = views[st].writeLock();
        w.lock();
        try {
            link(st, f.array, f.bucket, f.pred, f.predSalt, f.entry.next);
            count.decrementAndGet();
            gate.touch(this);
        } finally {
            w.unlock();
        }
        gate.retire(f.entry.handle);
        if (syncEachWrite) {
            gate.sync();
        }
    }

    /**
     * A change to install as one of a batch: the key's new value, or its removal ({@code value}
     * null). {@code version} 0 means the next one (1 for a new key, the current one + 1 on a
     * replacement); the write layer gives the version it decided when the change was logged.
     */
    public static final class Item {
        final byte[] key;
        final byte[] value;
        final long hash;
        final long expiry;
        final long version;
        /** The block its writer placed the entry in ({@link PlacedEntries}), 0 if the install writes it. */
        final long placed;
        /** The placed entry's head CRC, the salt of its {@code next} link. */
        final int placedHeadCrc;

        Item(byte[] key, long hash, byte[] value, long expiry, long version) {
            this(key, hash, value, expiry, version, 0, 0);
        }

        /**
         * A put of a key whose {@link HashtableOnDisk#hash} the caller has; {@code placed} is the block its
         * writer placed the entry (of this version and expiry) in already, or 0.
         */
        public Item(byte[] key, long hash, byte[] value, long expiry, long version, long placed, int placedHeadCrc) {
            this.key = key;
            this.value = value;
            this.hash = hash;
            this.expiry = expiry;
            this.version = version;
            this.placed = placed;
            this.placedHeadCrc = placedHeadCrc;
        }
    }

    @Override
    public void putAll(List<byte[]> keys, List<byte[]> values, long expiry) {
        ensureOpen();
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException(keys.size() + " keys and " + values.size() + " values");
        }
        List<Item> items = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            checkSizes(keys.get(i), values.get(i));
            items.add(new Item(keys.get(i), hash(keys.get(i)), values.get(i), expiry, 0));
        }
        InstallRounds.apply(this, items, true);
    }

    /**
     * Installs a batch of changes (the write layer's flusher): in rounds of at most one change
     * per bucket, each round's new entries allocated together (OBA) with their installation reads
     * done first, then linked. A later change of a key in {@code items} wins. Not atomic by
     * itself: in log mode the gate's next commit records the whole batch at once.
     */
    public void install(List<Item> items) {
        ensureOpen();
        gate.commitLeftovers();
        InstallRounds.apply(this, items, false);
    }

    @Override
    public void clear() {
        ensureOpen();
        lockAllWriters();
        try {
            ensureOpen();
            Doubler.finishFailedLocked(this); // the chains are walked below, each entry freed once
            Shape old = shape;
            if (count.get() == 0 && !old.doubling() && old.n() == BucketArray.MIN_BUCKETS) {
                return;
            }
            if (gate.busy()) {
                gate.sync(); // the chains on disk are exact, and nothing unlinked waits to be freed
            }
            BucketArray fresh = BucketArray.allocate(heap, BucketArray.MIN_BUCKETS, gate.slots);
            gate.sync();
            Shape empty = new Shape(fresh);
            writeHeader(empty, 0);
            gate.sync();
            lockAllViews();
            try {
                shape = empty;
                count.set(0);
            } finally {
                unlockAllViews();
            }
            // Nothing durable reaches the old structure any more, and no reader can: free it all.
            forEachChainHead(old, first -> {
                long cur = first;
                while (cur != 0) {
                    long next = entries.load(cur).h.next;
                    gate.cache.drop(cur);
                    gate.slots.drop(cur);
                    heap.free(cur);
                    cur = next;
                }
            });
            old.array.free(heap, gate.slots);
            if (old.next != null) {
                old.next.free(heap, gate.slots);
            }
        } finally {
            unlockAllWriters();
        }
    }

    /**
     * Calls {@code c} with the first entry of every non-empty chain of {@code s}, as on disk (no
     * link may wait).
     */
    void forEachChainHead(Shape s, java.util.function.LongConsumer c) {
        long n = s.n();
        for (long b = 0; b < n; b += Math.min(n, s.array.segmentSlots())) {
            int run = (int) Math.min(n - b, s.array.segmentSlots());
            long[] heads = s.array.getRun(heap, b, run);
            for (int i = 0; i < run; i++) {
                long bucket = b + i;
                if (s.doubling() && bucket < s.moved) {
                    long lo = s.next.get(heap, bucket);
                    long hi = s.next.get(heap, bucket + n);
                    if (lo != 0) {
                        c.accept(lo);
                    }
                    if (hi != 0) {
                        c.accept(hi);
                    }
                } else if (heads[i] != 0) {
                    c.accept(heads[i]);
                }
            }
        }
    }

    @Override
    public long sweepExpired() {
        ensureOpen();
        long removed = 0;
        TableCursor c = new TableCursor(this, false, true);
        while (c.hasNext()) {
            StoredEntry e = c.next();
            if (e.expiredAt(clock) && removeExpired(e.key)) {
                removed++;
            }
        }
        return removed;
    }

    // ------------------------------------------------------------------ doubling, header, locks

    /** Starts or continues a doubling when one is due and no other thread is running it. */
    void maybeDouble() {
        Shape s = shape;
        if (!s.doubling() && count.get() * 1000 <= s.n() * loadPermille) {
            return;
        }
        if (closed || !doubling.tryLock()) {
            return;
        }
        try {
            Doubler.run(this);
        } finally {
            doubling.unlock();
        }
    }

    /**
     * Whether a doubling is under way or due, for the table's entries and {@code coming} more:
     * the keys the write buffer will add when it installs them.
     */
    public boolean doublingDue(long coming) {
        Shape s = shape;
        return !closed && (s.doubling() || overLoaded(s, coming));
    }

    /**
     * Log mode: the heap had no room for the array of the doubling due at its last try (see
     * {@code Doubler.Logged}); the doubling waits, and the step that found so counts as none.
     */
    volatile boolean noRoomToDouble;

    /** See {@link #noRoomToDouble}: whether the last doubling step found no room for its array. */
    public boolean noRoomToDouble() {
        return noRoomToDouble;
    }

    /**
     * Log mode's flusher: one step of the doubling that is due for the entries and {@code coming}
     * more (its start, a batch of buckets, or its finish; each one install record); returns
     * whether more steps remain, the start of the next doubling among them when the entries
     * already call for it.
     */
    public boolean doublingStep(long coming) {
        if (closed || !doubling.tryLock()) {
            return false;
        }
        try {
            return Doubler.Logged.step(this, coming);
        } finally {
            doubling.unlock();
        }
    }

    /**
     * Whether the entries and {@code coming} more exceed the load factor over the buckets in use,
     * a doubling's moved buckets counted twice (each is split in two): the table is then behind
     * its entries, its chains longer than the load factor allows, and log mode's flusher runs
     * doubling steps back to back until it has caught up. Without that, a steady load of new keys
     * gained thousands of entries between two steps (an install batch), every chain walk grew
     * with them, and a load of 150,000 objects read 65 entries per put.
     */
    public boolean doublingBehind(long coming) {
        Shape s = shape;
        return !closed && exceedsLoad(s.doubling() ? s.n() + s.moved : s.n(), coming);
    }

    /** Whether the entry count calls for a doubling of {@code s}. */
    boolean overLoaded(Shape s) {
        return overLoaded(s, 0);
    }

    /** Whether the entry count and {@code coming} more call for a doubling of {@code s}. */
    boolean overLoaded(Shape s, long coming) {
        return exceedsLoad(s.n(), coming);
    }

    /**
     * The fewest buckets, {@code from} doubled as often as needed, that hold the entries and
     * {@code coming} more within the load factor.
     */
    long bucketsFor(long from, long coming) {
        long buckets = from;
        while (exceedsLoad(buckets, coming)) {
            buckets *= 2;
        }
        return buckets;
    }

    /** Whether the entries and {@code coming} more exceed the load factor over {@code buckets}. */
    private boolean exceedsLoad(long buckets, long coming) {
        return (count.get() + coming) * 1000 > buckets * loadPermille;
    }

    /** Writes the header for shape {@code s} and the current count: one write to the other slot. */
    void writeHeader(Shape s, long entries) {
        synchronized (headerLock) {
            headerSequence++;
            countInHeader = -1; // until the write succeeds: then a checkpoint or close writes the header again
            TableHeader.write(heap, header, new TableHeader.State(headerSequence, tableId, s.array.directory, entries,
                    loadPermille, s.next == null ? 0 : s.next.directory, s.moved, s.unzipFrom, hashing));
            countInHeader = entries;
        }
    }

    /** Log mode's checkpoint: the header written from the current state, count and shape (the caller syncs). */
    void writeState() {
        lockAllWriters();
        try {
            if (!closed) {
                writeHeader(shape, count.get());
            }
        } finally {
            unlockAllWriters();
        }
    }

    /** Records the current count in the header if it changed, or the header if its last write failed (the caller syncs). */
    void checkpoint() {
        lockAllWriters();
        try {
            if (!closed && count.get() != countInHeader) {
                writeHeader(shape, count.get());
            }
        } finally {
            unlockAllWriters();
        }
    }

    /**
     * Waits for running operations, records the count, and refuses further use (the caller syncs).
     * Then waits for a doubling in flight to stop, as it does at its next step once it sees the
     * table closed: one that had just allocated its new array frees it while the heap is open.
     */
    void close() {
        lockAllWriters();
        try {
            if (!closed) {
                // A clean close skips the recovery that would relink an open range: finish it
                // now, or throw, which leaves the store to recover at its next open.
                Doubler.finishFailedLocked(this);
                if (count.get() != countInHeader) {
                    writeHeader(shape, count.get());
                }
                closed = true;
            }
        } finally {
            unlockAllWriters();
        }
        doubling.lock();
        doubling.unlock();
    }

    boolean isClosed() {
        return closed;
    }

    void lockAllWriters() {
        for (ReentrantLock l : writers) {
            l.lock();
        }
    }

    void unlockAllWriters() {
        for (int i = STRIPES - 1; i >= 0; i--) {
            writers[i].unlock();
        }
    }

    void lockAllViews() {
        for (ReentrantReadWriteLock l : views) {
            l.writeLock().lock();
        }
    }

    void unlockAllViews() {
        for (int i = STRIPES - 1; i >= 0; i--) {
            views[i].writeLock().unlock();
        }
    }

    /**
     * Rewrites an entry's {@code next} in place, and in the cache, at once: for doubling and
     * recovery, when no link waits.
     */
    void writeNext(long entry, int salt, long next) {
        gate.writeNow(entry, Entries.NEXT_OFFSET, next, salt, true);
    }

    /** The table's state as install records and checkpoints carry it. */
    InstallRecord.TableState state() {
        Shape s = shape;
        return new InstallRecord.TableState(header, tableId, count.get(), s.array.directory,
                s.next == null ? 0 : s.next.directory, s.moved, loadPermille);
    }

    /** Log mode's recovery: the state the log says the table had last, its arrays read and checked. */
    void restore(InstallRecord.TableState st) {
        BucketArray a = BucketArray.load(heap, st.array(), gate.slots);
        Shape s;
        if (st.newArray() != 0) {
            BucketArray next = BucketArray.load(heap, st.newArray(), gate.slots);
            if (next.bucketCount != 2 * a.bucketCount || st.moved() < 0 || st.moved() > a.bucketCount) {
                throw corrupt(header, "a doubling from " + a.bucketCount + " buckets with moved in 0.." + a.bucketCount,
                        next.bucketCount + " buckets, moved " + st.moved());
            }
            s = new Shape(a, next, st.moved(), st.moved());
        } else {
            s = new Shape(a);
        }
        if (st.count() < 0) {
            throw corrupt(header, "a non-negative entry count", Long.toString(st.count()));
        }
        shape = s;
        count.set(st.count());
    }

    /** Header handle, for the catalog and the verifier. */
    public long headerHandle() {
        return header;
    }

    public String name() {
        return name;
    }

    @Override
    public String toString() {
        Shape s = shape;
        return "table '" + name + "' (" + count.get() + " entries, " + s.n() + " buckets"
                + (s.doubling() ? ", doubling: " + s.moved + " moved" : "") + ")";
    }
}
