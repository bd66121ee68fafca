package org.htod.bench.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.htod.core.device.IoCounts;

/**
 * The stores of the durable-put benchmark ({@code DurablePutBenchmark}), by name: every put is on
 * stable storage when it returns, and puts may come from many threads at once. Unlike {@link
 * Stores}, whose adapters take writes from one thread at a time, each store here is opened so that
 * concurrent writers can share its syncs where the store knows how:
 *
 * <ul>
 *   <li>{@value #HTOD_LOG}: htod in log mode at htod's {@code Durability.SYNC}: group commit, a
 *       leader writes and syncs every record appended so far while the others wait;
 *   <li>{@value #HTOD_PLACED}: the same with placed values ({@code placeValuesFrom(1024)}): a
 *       put of a large value writes its entry into the heap before its record, which names the
 *       block, so the value reaches the disk once;
 *   <li>{@value #HTOD_DIRECT}: htod in direct mode ({@code directMode(true)}) at {@code
 *       Durability.SYNC}: a sync shared by the puts running at the same time;
 *   <li>{@code rocksdb}: the {@link Stores} adapter at SYNC, {@code WriteOptions.setSync(true)}:
 *       RocksDB's write group makes one WAL write and sync for the writers queued behind its leader;
 *   <li>{@code sqlite}: the {@link Stores} adapter at SYNC (WAL, {@code synchronous=FULL},
 *       autocommit) behind a {@link SynchronizedStore}: one connection, one commit and WAL sync per
 *       put, one put at a time. SQLite has one writer at a time in any case; more connections
 *       would only add busy waits;
 *   <li>{@code file-per-object}: the {@link Stores} adapter at SYNC in concurrent mode: write a
 *       temporary file, force it, rename it over the target and force the directory; the file
 *       system's journal may commit concurrent forces together;
 *   <li>{@value DiskDsyncStore#NAME}: no store, the disk itself: each put one 4 KiB write through
 *       an {@code O_DSYNC} descriptor over blocks written before (as {@code dd oflag=dsync
 *       conv=notrunc}), so that the disk's durable write rate is measured in the same run, by the
 *       same harness, as the stores it bounds ({@link DiskDsyncStore});
 *   <li>{@value LogAloneStore#NAME}: no store, htod's log alone: each put one record of the bytes
 *       a log-mode put logs, appended and made durable by group commit, nothing installed, so that
 *       {@value #HTOD_LOG} against it is what the rest of log mode costs ({@link LogAloneStore}).
 * </ul>
 */
public final class DurableStores {

    public static final String HTOD_LOG = HtodKeyValueStore.LOG_NAME;
    public static final String HTOD_DIRECT = HtodKeyValueStore.DIRECT_NAME;
    public static final String HTOD_PLACED = HtodKeyValueStore.PLACED_NAME;

    /** Every store's name, htod's first. */
    public static final List<String> NAMES =
            List.of(HTOD_LOG, HTOD_PLACED, HTOD_DIRECT, Stores.ROCKSDB, Stores.SQLITE, Stores.FILE_PER_OBJECT);

    /** htod's log alone, measured beside the stores: it keeps nothing readable. */
    public static final String LOG_ALONE = LogAloneStore.NAME;

    /** The disk's own durable write rate, measured beside the stores: it keeps nothing readable. */
    public static final String DISK = DiskDsyncStore.NAME;

    /** Every name {@link #open} takes: the stores, then {@link #LOG_ALONE} and {@link #DISK}. */
    public static final List<String> ALL = Stream.concat(NAMES.stream(), Stream.of(LOG_ALONE, DISK)).toList();

    private DurableStores() {}

    /** Opens (creating when empty) the store {@code name} in {@code dir}, which it then owns. */
    public static KeyValueStore open(String name, Path dir) {
        if (!ALL.contains(name)) {
            throw new IllegalArgumentException("unknown durable store '" + name + "', expected one of " + ALL);
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        switch (name) {
            case HtodKeyValueStore.LOG_NAME, HtodKeyValueStore.PLACED_NAME, HtodKeyValueStore.DIRECT_NAME:
                return HtodKeyValueStore.durable(dir, name);
            case RocksDbStore.NAME:
                return new RocksDbStore(dir, Durability.SYNC);
            case SqliteStore.NAME:
                return new SynchronizedStore(new SqliteStore(dir, Durability.SYNC));
            case FilePerObjectStore.NAME:
                return new FilePerObjectStore(dir, Durability.SYNC, true);
            case LogAloneStore.NAME:
                return new LogAloneStore(dir);
            case DiskDsyncStore.NAME:
                return new DiskDsyncStore(dir);
            default:
                throw new AssertionError(name);
        }
    }

    /**
     * What the store's device did for {@code puts} puts, as {@code key=value} pairs (syncs, bytes
     * written; log mode's group commits and their records), or null when the store does not count
     * its I/O (every store but htod's).
     */
    public static String ioSummary(KeyValueStore kv, long puts) {
        if (kv instanceof HtodKeyValueStore h) {
            return h.ioSummary(puts);
        }
        return kv instanceof LogAloneStore l ? l.ioSummary(puts) : null;
    }

    /**
     * The fields of a {@code durable-io} line, as {@code DurableReport} reads them: {@code puts},
     * the device's {@code c}, and the log's group commits and their records, then how the waits
     * for another's commit ended: at once, yielding, parked ({@code groups}, as {@code
     * Log.groupCounts} gives them; null where there is no log).
     */
    static String ioLine(long puts, IoCounts c, long[] groups) {
        String line = "puts=" + puts + " syncs=" + c.syncs() + " writes=" + c.writes() + " bytesWritten="
                + c.bytesWritten();
        if (groups == null) {
            return line;
        }
        line += " groups=" + groups[0] + " groupRecords=" + groups[1];
        // A log built before the waits were counted (an A/B's older classes) gives two numbers
        return groups.length < 5 ? line
                : line + " waitsAtOnce=" + groups[2] + " waitsYielded=" + groups[3] + " waitsParked=" + groups[4];
    }
}
