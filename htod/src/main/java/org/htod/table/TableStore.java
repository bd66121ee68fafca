package org.htod.table;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.htod.core.CorruptStoreException;
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
    private final TableRecovery.Report recovery;
    /** Whether the store was closed cleanly before this opening: no header write can have been torn. */
    private final boolean clean;
    private volatile boolean closed;

    private TableStore(Storage storage, TableOptions options) {
        this.storage = storage;
        this.heap = storage.heap();
        this.gate = new SyncGate(heap, new EntryCache(options.cacheBytes()), options.maxPendingLinks());
        this.options = options;
        boolean clean = storage.recoveryReport().wasClean();
        long root = storage.rootCatalog();
        if (root == 0) {
            // A store whose creation ends here: the storage formatted its heap afresh (a creation
            // cut short left nothing else in it), and the catalog recorded last completes it.
            root = HashtableOnDisk.create(heap, options.loadPermille()).header();
            gate.sync();
            storage.setRootCatalog(root);
        }
        // Catalog changes are rare and each is a map coming or going: always synced.
        this.clean = clean;
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
            this.recovery = TableRecovery.run(this); // begins the storage once its walks succeed
        }
    }

    /** Opens the tables of {@code storage}, creating the catalog if it has none. */
    public static TableStore open(Storage storage, TableOptions options) {
        return new TableStore(storage, options);
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
        } else if (create) {
            HashtableOnDisk.Created c = HashtableOnDisk.create(heap, options.loadPermille());
            header = c.header();
            gate.sync();
            byte[] value = ByteBuffer.allocate(CATALOG_VALUE).putLong(0, c.header()).putLong(8, c.tableId()).array();
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
    public TableRecovery.Report recovery() {
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
    public TableVerifier.Report verify(boolean checkLeaks) {
        ensureOpen();
        return TableVerifier.verify(this, checkLeaks);
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
        }
        storage.close();
    }
}
