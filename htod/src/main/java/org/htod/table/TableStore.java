package org.htod.table;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
    private volatile boolean closed;

    private TableStore(Storage storage, TableOptions options) {
        this.storage = storage;
        this.heap = storage.heap();
        this.gate = new SyncGate(heap, new EntryCache(options.cacheBytes()), options.maxPendingLinks());
        this.options = options;
        boolean clean = storage.recoveryReport().wasClean();
        long root = storage.rootCatalog();
        if (root == 0) {
            if (!clean) {
                // Created, then crashed before the catalog was recorded: nothing here is reachable.
                TableRecovery.freeEverything(heap);
            }
            root = HashtableOnDisk.create(heap, options.loadPermille());
            gate.sync();
            storage.setRootCatalog(root);
        }
        // Catalog changes are rare and each is a map coming or going: always synced.
        this.catalog = HashtableOnDisk.open(heap, gate, root, CATALOG_NAME, options.withSyncEachWrite(true));
        this.recovery = clean ? null : TableRecovery.run(this);
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
        StoredEntry e = catalog.get(nameKey(name));
        long header;
        if (e != null) {
            header = ByteBuffer.wrap(e.value()).getLong();
        } else if (create) {
            header = HashtableOnDisk.create(heap, options.loadPermille());
            gate.sync();
            long h = header;
            catalog.update(nameKey(name), cur -> Change.put(ByteBuffer.allocate(8).putLong(0, h).array(), 0));
        } else {
            return null;
        }
        t = HashtableOnDisk.open(heap, gate, header, name, options);
        tables.put(name, t);
        return t;
    }

    /** Opens a table for recovery and verification, from its catalog entry. */
    synchronized HashtableOnDisk tableAt(String name, long header) {
        HashtableOnDisk t = tables.get(name);
        if (t == null) {
            t = HashtableOnDisk.open(heap, gate, header, name, options);
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

    /** Every table with its header handle, read from the catalog. */
    Map<String, Long> catalogEntries() {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        for (Iterator<StoredEntry> it = catalog.iterator(true); it.hasNext();) {
            StoredEntry e = it.next();
            out.put(new String(e.key(), StandardCharsets.UTF_8), ByteBuffer.wrap(e.value()).getLong());
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
