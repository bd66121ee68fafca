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
import org.htod.table.HashtableOnDisk;
import org.htod.table.TableRecovery;
import org.htod.table.TableStore;
import org.htod.table.TableVerifier;

/**
 * An open store: one file or device holding any number of named maps. Thread-safe. Close it to
 * shut down cleanly, which makes the next open fast (no recovery).
 */
public final class HtodStore implements AutoCloseable {
    private final TableStore tables;
    private final Durability durability;
    private final Clock clock;
    private final RecoveryReport report;
    private final ScheduledExecutorService syncer;
    private volatile boolean closed;

    HtodStore(TableStore tables, Durability durability, Duration syncInterval, Clock clock) {
        this.tables = tables;
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
        TableRecovery.Report t = tables.recovery();
        if (t == null) {
            return new RecoveryReport(true, heap.path(), heap.took(), heap.headersRead(), Duration.ZERO, 0, 0, 0,
                    0, "opened cleanly, heap " + heap);
        }
        return new RecoveryReport(false, heap.path(), heap.took(), heap.headersRead(), t.took(), t.tables(),
                t.entries(), t.leakedBlocksFreed(), t.entriesRelinked(), "after an unclean shutdown: heap " + heap + "; "
                        + t);
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
        HashtableOnDisk t = tables.table(name, true);
        return new HtodMap<>(name, t, t, keyCodec, valueCodec, clock::millis);
    }

    /** Names of the maps in this store. */
    public List<String> mapNames() {
        ensureOpen();
        return tables.names();
    }

    /** Makes every write so far durable. */
    public void sync() {
        ensureOpen();
        tables.sync();
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
        ensureOpen();
        try {
            TableVerifier.Report r = tables.verify(true);
            return new VerifyReport(r.tables(), r.entries(), r.reachedBlocks(), r.allocatedBlocks(), List.of());
        } catch (CorruptStoreException e) {
            return new VerifyReport(0, 0, 0, 0, List.of(new VerifyReport.Problem(e.offset(), e.getMessage())));
        }
    }

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
        return "HtodStore[" + tables.storage().heap().device().name() + ", " + durability + "]";
    }
}
