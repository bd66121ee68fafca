package org.htod.table;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.htod.core.CorruptStoreException;
import org.htod.core.StepListener;
import org.htod.core.StoreClosedException;
import org.htod.core.alloc.Heap;
import org.htod.core.storage.Storage;

/**
 * The tables of one store: a root catalog, itself a {@link HashtableOnDisk} mapping each table
 * name (UTF-8) to the handle of its header (8 bytes), whose own header the superblock names.
 * Opens tables on demand and keeps them open until the store closes; runs the table recovery
 * after an unclean shutdown; syncs and closes.
 *
 * <p>The heap of a store belongs to its tables: after an unclean shutdown every allocated block
 * that no table reaches is freed.
 */
public final class TableStore implements AutoCloseable {
    static final String CATALOG_NAME = "(catalog)";

    private final Storage storage;
    private final Heap heap;
    private final SyncGate gate;
    private final TableOptions options;
    private final HashtableOnDisk catalog;
    private final Map<String, HashtableOnDisk> tables = new ConcurrentHashMap<>();
    private final TableRecoveryReport recovery;
    /**
     * The hash function of each table this store creates, the catalog's included: a fresh key each
     * ({@link TableHash#fresh}); tests that need known buckets give another, per store ({@link
     * TableOptions#hashKeySeed}, or the version-1 function). Called under this store's lock.
     */
    private final Supplier<TableHash> newHashes;
    /** Whether the store was closed cleanly before this opening: no header write can have been torn. */
    private final boolean clean;
    private volatile boolean closed;

    private TableStore(Storage storage, TableOptions options, Installer installer,
            List<InstallRecord.LinkWrite> recoveredLinks, Map<Long, InstallRecord.TableState> restored,
            StepListener progress, Supplier<TableHash> newHashes) {
        this.storage = storage;
        this.newHashes = newHashes;
        this.heap = storage.heap();
        SlotCache slots = new SlotCache(options.slotCacheBytes());
        this.gate = new SyncGate(heap, new EntryCache(options.cacheBytes(), slots), slots, options.maxPendingLinks(),
                options.slotRunBytes(), installer);
        this.options = options;
        boolean clean = storage.recoveryReport().wasClean();
        long root = storage.rootCatalog();
        if (root == 0) {
            // A store whose creation ends here: the storage formatted its heap afresh (a creation
            // cut short left nothing else in it), and the catalog recorded last completes it.
            root = HashtableOnDisk.create(heap, gate.slots, options.loadPermille(), newHashes.get()).header();
            heap.sync();
            storage.setRootCatalog(root);
        }
        // Catalog changes are rare and each is a map coming or going: always synced.
        this.clean = clean && installer == null;
        if (installer != null) {
            // Log mode: the tables are as the last checkpoint and the log say, links the log
            // recorded wait in the gate where every read sees them, and the header slots are only
            // read for the table's identity (a crash in a checkpoint may have torn one).
            gate.recovered(recoveredLinks);
            this.catalog = openLogged(root, CATALOG_NAME, options.withSyncEachWrite(true), restored, null);
            for (CatalogEntry e : catalogEntries()) {
                HashtableOnDisk t = openLogged(headerOf(e.value(), e.name(), e.entry(), heap), e.name(), options, restored,
                        e.value());
                tables.put(e.name(), t);
            }
            this.recovery = null;
            return;
        }
        this.catalog = HashtableOnDisk.open(heap, gate, root, CATALOG_NAME, options.withSyncEachWrite(true), clean);
        if (clean) {
            // Every map's header and bucket directory read and checked before the open writes
            // anything: damage is reported by the open, with the store as it was.
            for (CatalogEntry e : catalogEntries()) {
                tableAt(e.name(), e.value(), e.entry());
            }
            storage.begin();
            this.recovery = null;
        } else {
            this.recovery = TableRecovery.run(this, progress); // begins the storage once its walks succeed
        }
    }

    /** Log mode: a table in the state the checkpoint and the log give, checked against its header and catalog value. */
    private HashtableOnDisk openLogged(long header, String name, TableOptions o,
            Map<Long, InstallRecord.TableState> restored, byte[] catalogValue) {
        long id = catalogValue != null ? ByteBuffer.wrap(catalogValue).getLong(8) : -1;
        InstallRecord.TableState st = null;
        for (InstallRecord.TableState s : restored.values()) {
            if (s.header() == header && (id == -1 || s.tableId() == id)) {
                st = s;
            }
        }
        if (st == null) {
            throw new CorruptStoreException("table '" + name + "' (header at offset " + heap.address(header) + ") is in "
                    + "the catalog, but neither the last checkpoint nor the log after it holds its state", heap.address(header));
        }
        return HashtableOnDisk.openLogged(heap, gate, header, name, o, st);
    }

    /** Opens the tables of {@code storage} in direct mode, creating the catalog if it has none. */
    public static TableStore open(Storage storage, TableOptions options) {
        return open(storage, options, StepListener.NONE);
    }

    /** {@link #open(Storage, TableOptions)}, telling {@code progress} of the blocks a recovery's walks and sweep meet. */
    public static TableStore open(Storage storage, TableOptions options, StepListener progress) {
        return new TableStore(storage, options, null, List.of(), Map.of(), progress, newHashes(options));
    }

    /** {@link #open(Storage, TableOptions)}, whose new tables (the catalog too, if new) hash with {@code newHashes}'s. */
    static TableStore open(Storage storage, TableOptions options, Supplier<TableHash> newHashes) {
        return new TableStore(storage, options, null, List.of(), Map.of(), StepListener.NONE, newHashes);
    }

    /**
     * Opens the tables of a store in log mode: commits go through {@code installer}; the tables'
     * states are the ones {@code restored} holds (by table id), and {@code recoveredLinks} wait in
     * the gate until {@link #writeRecovered()}. Writes nothing (unless the store is being created).
     */
    public static TableStore openLogged(Storage storage, TableOptions options, Installer installer,
            List<InstallRecord.LinkWrite> recoveredLinks, Map<Long, InstallRecord.TableState> restored) {
        return new TableStore(storage, options, installer, recoveredLinks, restored, StepListener.NONE,
                newHashes(options));
    }

    private static Supplier<TableHash> newHashes(TableOptions options) {
        if (options.hashKeySeed() == 0) {
            return TableHash::fresh;
        }
        java.util.SplittableRandom r = new java.util.SplittableRandom(options.hashKeySeed());
        return () -> TableHash.keyed(r.nextLong(), r.nextLong());
    }

    /**
     * Log mode's replay, before the tables open: the hash function of a table of {@code states}
     * by its id, read from its header when first asked for (one read a table, of the tables a
     * placed entry names), or null for an id no state has.
     */
    public static LongFunction<TableHash> hashes(Heap heap, Map<Long, InstallRecord.TableState> states) {
        Map<Long, TableHash> read = new java.util.HashMap<>();
        return id -> {
            InstallRecord.TableState st = states.get(id);
            return st == null ? null
                    : read.computeIfAbsent(id, i -> TableHeader.read(heap, st.header(), false).hash());
        };
    }

    /** Log mode, once the open may write: the links the log recorded, written in place. */
    public void writeRecovered() {
        gate.writeRecovered();
    }

    /** Every table's state, the catalog's included, as a checkpoint records it. */
    public List<InstallRecord.TableState> states() {
        List<InstallRecord.TableState> out = new ArrayList<>();
        out.add(catalog.state());
        for (HashtableOnDisk t : tables.values()) {
            out.add(t.state());
        }
        return out;
    }

    /** Writes every table's header from its state (log mode's checkpoint; the caller syncs). */
    public void writeHeaders() {
        catalog.writeState();
        for (HashtableOnDisk t : tables.values()) {
            t.writeState();
        }
    }

    /** Log mode: records everything changed since the last commit and writes it in place (see {@link SyncGate}). */
    public void commit() {
        gate.sync();
    }

    /**
     * Log mode: commits alone what a failed commit left waiting, if anything (see {@link
     * SyncGate#commitLeftovers}), before an install tells the journal of blocks it has yet to link.
     */
    public void commitLeftovers() {
        gate.commitLeftovers();
    }

    /** The maps' tables (the catalog's not among them). */
    public List<HashtableOnDisk> maps() {
        return new ArrayList<>(tables.values());
    }

    /** Every open table, the catalog's first. */
    public List<HashtableOnDisk> all() {
        List<HashtableOnDisk> out = new ArrayList<>();
        out.add(catalog);
        out.addAll(tables.values());
        return out;
    }

    static byte[] nameKey(String name) {
        return name.getBytes(StandardCharsets.UTF_8);
    }

    /** The table called {@code name}, created if {@code create} and absent; null if absent otherwise. */
    public synchronized HashtableOnDisk table(String name, boolean create) {
        ensureOpen();
        HashtableOnDisk t = tables.get(name);
        if (t != null) {
            return t;
        }
        byte[] key = nameKey(name);
        if (key.length > Entries.MAX_KEY) {
            throw new IllegalArgumentException("a map name takes at most " + Entries.MAX_KEY + " bytes in UTF-8, found "
                    + key.length);
        }
        StoredEntry e = catalog.get(key);
        long header;
        if (e != null) {
            header = headerOf(e.value(), name, e.handle, heap);
        } else if (create && gate.logged()) {
            // One install record: the new table's blocks and state, and its catalog entry. Should
            // any step fail (the disk full), the blocks it allocated are given back before any
            // record names them, and nothing else changed: the catalog links its entry last, in
            // memory, after every write.
            int mark = gate.allocationMark();
            try {
                HashtableOnDisk.Created c = HashtableOnDisk.create(heap, gate.slots, options.loadPermille(), newHashes.get());
                byte[] value = ByteBuffer.allocate(CATALOG_VALUE).putLong(0, c.header()).putLong(8, c.tableId()).array();
                t = HashtableOnDisk.open(heap, gate, c.header(), name, options, false);
                gate.touch(t); // before the catalog's entry: any record that names the entry carries the state
                catalog.update(key, cur -> Change.put(value, 0));
            } catch (RuntimeException failed) {
                if (t != null && catalog.get(key) != null) {
                    // The catalog linked its entry before something after it failed (a commit):
                    // the table exists in memory and is recorded with the next commit.
                    tables.put(name, t);
                    throw failed;
                }
                try {
                    if (t != null) {
                        gate.untouch(t);
                    }
                    gate.freeAllocatedSince(mark);
                } catch (RuntimeException alsoFailed) {
                    failed.addSuppressed(alsoFailed);
                }
                throw failed;
            }
            tables.put(name, t);
            return t;
        } else if (create) {
            HashtableOnDisk.Created c = HashtableOnDisk.create(heap, gate.slots, options.loadPermille(), newHashes.get());
            header = c.header();
            byte[] value = ByteBuffer.allocate(CATALOG_VALUE).putLong(0, c.header()).putLong(8, c.tableId()).array();
            gate.sync(); // direct mode: the table is durable before the catalog names it
            catalog.update(key, cur -> Change.put(value, 0));
        } else {
            return null;
        }
        t = HashtableOnDisk.open(heap, gate, header, name, options, clean);
        checkTableId(t, e == null ? null : e.value());
        tables.put(name, t);
        return t;
    }

    /** Bytes of a catalog value: the handle of the table's header and the table's id. */
    static final int CATALOG_VALUE = 16;

    /** The header handle in a catalog value, checked for its length. */
    static long headerOf(byte[] value, String name, long entry, Heap heap) {
        if (value.length != CATALOG_VALUE) {
            throw new CorruptStoreException("catalog entry of map '" + name + "' at offset " + heap.address(entry) + " of "
                    + heap.device().name() + ": expected a value of " + CATALOG_VALUE + " bytes, found " + value.length,
                    heap.address(entry));
        }
        return ByteBuffer.wrap(value).getLong(0);
    }

    /** A table opened from a catalog value must carry the id the value names. */
    private void checkTableId(HashtableOnDisk t, byte[] value) {
        if (value != null && ByteBuffer.wrap(value).getLong(8) != t.tableId) {
            throw t.corrupt(t.header, "the header of table id 0x" + Long.toHexString(ByteBuffer.wrap(value).getLong(8))
                    + " named by the catalog", "table id 0x" + Long.toHexString(t.tableId));
        }
    }

    /** Opens a table for recovery and verification, from its catalog value. */
    synchronized HashtableOnDisk tableAt(String name, byte[] value, long entry) {
        HashtableOnDisk t = tables.get(name);
        if (t == null) {
            t = HashtableOnDisk.open(heap, gate, headerOf(value, name, entry, heap), name, options, clean);
            checkTableId(t, value);
            tables.put(name, t);
        }
        return t;
    }

    /** Names of all tables, read from the catalog. */
    public List<String> names() {
        ensureOpen();
        List<String> out = new ArrayList<>();
        for (Iterator<StoredEntry> it = catalog.iterator(false); it.hasNext();) {
            out.add(new String(it.next().key(), StandardCharsets.UTF_8));
        }
        return out;
    }

    /** A map as the catalog lists it: its name, the catalog value, and the catalog entry's block. */
    record CatalogEntry(String name, byte[] value, long entry) {}

    /** Every table, read from the catalog. */
    List<CatalogEntry> catalogEntries() {
        List<CatalogEntry> out = new ArrayList<>();
        for (Iterator<StoredEntry> it = catalog.iterator(true); it.hasNext();) {
            StoredEntry e = it.next();
            out.add(new CatalogEntry(new String(e.key(), StandardCharsets.UTF_8), e.value(), e.handle));
        }
        return out;
    }

    HashtableOnDisk catalog() {
        return catalog;
    }

    Heap heap() {
        return heap;
    }

    SyncGate gate() {
        return gate;
    }

    /** What the table recovery did on open, or null if the store had been closed cleanly. */
    public TableRecoveryReport recovery() {
        return recovery;
    }

    public Storage storage() {
        return storage;
    }

    /** Makes every write so far durable, with the entry counts recorded in the table headers. */
    public void sync() {
        ensureOpen();
        for (HashtableOnDisk t : tables.values()) {
            t.checkpoint();
        }
        catalog.checkpoint();
        gate.sync();
    }

    /** Runs the structural verifier over every table (see {@link TableVerifier}). */
    public TableVerifyReport verify(boolean checkLeaks) {
        ensureOpen();
        return TableVerifier.verify(this, checkLeaks);
    }

    /** {@link #verify(boolean)}, with blocks outside the tables that a layer above accounts for. */
    public TableVerifyReport verify(boolean checkLeaks, java.util.function.LongPredicate alsoReached) {
        return verify(checkLeaks, alsoReached, StepListener.NONE);
    }

    /** {@link #verify(boolean, java.util.function.LongPredicate)}, telling {@code progress} of the blocks met. */
    public TableVerifyReport verify(boolean checkLeaks, java.util.function.LongPredicate alsoReached,
            StepListener progress) {
        ensureOpen();
        return TableVerifier.verify(this, checkLeaks, alsoReached, progress);
    }

    /**
     * Installation reads so far, {device, entry cache}: chain entries the write layer's installs
     * loaded to find their keys, and those the entry cache served, the reads it avoided.
     */
    public long[] installReads() {
        return gate.installReads();
    }

    /** The entry cache's hits and misses since the store opened. */
    public long[] cacheCounts() {
        return gate.cache.counts();
    }

    /** Device syncs so far, for tests that count them. */
    public long syncCount() {
        return gate.syncCount();
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException("the store on " + heap.device().name() + " is closed");
        }
    }

    /**
     * Clean shutdown: every table's count in its header, a sync, then the storage's own close. If
     * any of it fails, the device is closed without marking the store clean, so that the next open
     * recovers.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (HashtableOnDisk t : tables.values()) {
                t.close();
            }
            catalog.close();
            gate.sync();
        } catch (RuntimeException e) {
            heap.device().close();
            throw e;
        } finally {
            dropCaches();
        }
        storage.close();
    }

    /**
     * Empties the entry cache and the bucket slots held in memory, up to the store's cache size:
     * the store closed (this close in direct mode; the write layer's in log mode, which leaves
     * the tables unclosed), and a closed store that an application still refers to kept them.
     * Nothing reads the tables after that: a read would miss and find the device closed.
     */
    public void dropCaches() {
        gate.cache.clear();
        gate.slots.clear();
    }
}
