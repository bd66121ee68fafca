package org.htod;

import java.util.Iterator;
import java.util.List;
import org.htod.table.Change;
import org.htod.table.Mutation;
import org.htod.table.StoredEntry;
import org.htod.table.TableReader;
import org.htod.table.TableWriter;

/**
 * A map's table seen through its store's {@link OpMeter} and its gate: a read is a get; an update
 * is a put or a remove by what it did (a mutation that left the key alone is counted apart,
 * untimed). Clear, sweeps and iteration are not counted. Every operation passes the store's gate
 * ({@link StoreGate}) and, in log mode, finds the map's table through its {@link
 * HtodStore.MapHandle}, which an online compaction repoints to the new file; writes are told to
 * the store first, for a compaction under way to carry over.
 */
final class MeteredTable implements TableReader, TableWriter {
    private final String name;
    /** Log mode: where the map is now; null in direct mode. */
    private final HtodStore.MapHandle handle;
    private final TableReader fixedReader;
    private final TableWriter fixedWriter;
    private final OpMeter meter;
    private final HtodStore store;

    MeteredTable(String name, HtodStore.MapHandle handle, TableReader reader, TableWriter writer, OpMeter meter,
            HtodStore store) {
        this.name = name;
        this.handle = handle;
        this.fixedReader = reader;
        this.fixedWriter = writer;
        this.meter = meter;
        this.store = store;
    }

    private TableReader reader() {
        return handle != null ? handle.target : fixedReader;
    }

    private TableWriter writer() {
        return handle != null ? handle.target : fixedWriter;
    }

    @Override
    public StoredEntry get(byte[] key) {
        store.enter();
        try {
            long t = meter.start();
            StoredEntry e = reader().get(key);
            meter.done(OpMeter.Op.GET, 1, t);
            return e;
        } finally {
            store.exit();
        }
    }

    @Override
    public boolean containsKey(byte[] key) {
        store.enter();
        try {
            long t = meter.start();
            boolean found = reader().containsKey(key);
            meter.done(OpMeter.Op.GET, 1, t);
            return found;
        } finally {
            store.exit();
        }
    }

    @Override
    public long size() {
        store.enter();
        try {
            return reader().size();
        } finally {
            store.exit();
        }
    }

    @Override
    public Iterator<StoredEntry> iterator(boolean withValues) {
        store.enter();
        try {
            return store.guarded(reader().iterator(withValues));
        } finally {
            store.exit();
        }
    }

    @Override
    public void update(byte[] key, Mutation mutation) {
        store.enter();
        try {
            store.beforeWrite();
            store.written(name, key);
            long t = meter.start();
            Change[] done = {null};
            // Marked as a function given to compute or merge: every mutation runs holding its
            // key's lock, and runs the map's codecs (and a compute's function) in it, any of
            // which could otherwise write the store and wait for what waits for that lock.
            Mutation counted = cur -> done[0] = store.runFunction(() -> mutation.apply(cur));
            writer().update(key, mutation.readsValue() ? counted : Mutation.blind(counted));
            if (done[0] == null) {
                meter.unchanged();
            } else {
                meter.done(done[0].isRemove() ? OpMeter.Op.REMOVE : OpMeter.Op.PUT, 1, t);
            }
        } finally {
            store.exit();
        }
    }

    @Override
    public void putAll(List<byte[]> keys, List<byte[]> values, long expiry) {
        store.enter();
        try {
            store.beforeWrite();
            for (byte[] k : keys) {
                store.written(name, k);
            }
            long t = meter.start();
            writer().putAll(keys, values, expiry);
            meter.done(OpMeter.Op.PUT, keys.size(), t);
        } finally {
            store.exit();
        }
    }

    @Override
    public void clear() {
        store.enter();
        try {
            store.beforeWrite();
            store.written(name, null);
            writer().clear();
        } finally {
            store.exit();
        }
    }

    @Override
    public long sweepExpired() {
        // Not told to a compaction: it removes only dead entries, which are invisible in the new
        // file too (and removed there by its next sweep).
        store.refuseInFunction("write to the store");
        store.refuseIfReadOnly("sweep expired entries out of it");
        store.enter();
        try {
            return writer().sweepExpired();
        } finally {
            store.exit();
        }
    }
}
