package org.htod;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.NotAStoreException;
import org.htod.core.container.Container;
import org.htod.core.container.ContainerConfig;
import org.htod.core.container.Superblock;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.OverlayDevice;
import org.htod.core.storage.Storage;
import org.htod.mob.LoggedOpen;
import org.htod.mob.WriteLayer;
import org.htod.table.HashtableOnDisk;
import org.htod.table.TableOptions;
import org.htod.table.TableStore;

/**
 * Entry point: {@code Htod.builder(device).durability(Durability.SYNC).open()} gives an {@link
 * HtodStore}, whose {@link HtodStore#map maps} are persistent {@code ConcurrentMap}s.
 *
 * <p>The storage options (method, grain, quick lists, acceptable waste, OBA threshold, log and
 * heap size) are fixed when the store is created and read from it afterwards; giving them when
 * opening an existing store has no effect. The others (durability, sync interval, clock) apply
 * to each opening.
 */
public final class Htod {
    /** Largest key, in encoded bytes. */
    public static final int MAX_KEY_BYTES = HashtableOnDisk.MAX_KEY;
    /** Largest value, in encoded bytes: 256 MiB. */
    public static final int MAX_VALUE_BYTES = HashtableOnDisk.MAX_VALUE;
    /**
     * Default size of the write buffer (log mode): 64 MiB, or an eighth of the JVM's largest heap
     * where that is less (at least 1 MiB), so that a small JVM does not run out of memory.
     */
    public static final long DEFAULT_BUFFER_SIZE = 64L << 20;
    /**
     * The smallest default size of the read caches: 8 MiB. The default itself is a sixteenth of
     * the JVM's largest heap, between this and {@link #MAX_DEFAULT_CACHE_SIZE} (see {@link
     * Builder#cacheSize}).
     */
    public static final long DEFAULT_CACHE_SIZE = 8L << 20;
    /** The largest default size of the read caches: 1 GiB. */
    public static final long MAX_DEFAULT_CACHE_SIZE = 1L << 30;

    /**
     * The read caches' default size in this JVM ({@link Builder#cacheSize}): a sixteenth of its
     * largest heap, at least {@link #DEFAULT_CACHE_SIZE} and at most {@link #MAX_DEFAULT_CACHE_SIZE}.
     */
    public static long defaultCacheSize() {
        return Math.max(DEFAULT_CACHE_SIZE, Math.min(MAX_DEFAULT_CACHE_SIZE, Runtime.getRuntime().maxMemory() / 16));
    }

    /**
     * The write buffer's default size in this JVM ({@link Builder#bufferSize}): {@link
     * #DEFAULT_BUFFER_SIZE}, or an eighth of its largest heap where that is less, at least 1 MiB.
     */
    public static long defaultBufferSize() {
        return Math.max(1L << 20, Math.min(DEFAULT_BUFFER_SIZE, Runtime.getRuntime().maxMemory() / 8));
    }

    private Htod() {}

    /**
     * A builder for a store in the file {@code path}, created if missing (and allowed). The file is
     * locked while the store is open, so that no other store, in this process or another, opens
     * it.
     */
    public static Builder builder(Path path) {
        Objects.requireNonNull(path, "path");
        return new Builder(path.toString(), path, (createIfMissing, mapReads, readOnly) -> {
            if ((readOnly || !createIfMissing) && !Files.exists(path)) {
                throw new NotAStoreException(path + " does not exist and " + (readOnly ? "a read-only open creates"
                        + " nothing" : "createIfMissing is off"));
            }
            return readOnly ? new OverlayDevice(FileDevice.openReadOnly(path)) : FileDevice.open(path, Long.MAX_VALUE, 512,
                    mapReads);
        });
    }

    /**
     * Verifies the store in the file {@code path}: opens it (never creating one), runs {@link
     * HtodStore#verify()} and closes it. A store that was not closed cleanly is recovered first,
     * as by any open; damage that stops it from opening is reported as a problem, not thrown.
     *
     * @throws NotAStoreException if {@code path} holds no store
     * @throws org.htod.core.StoreLockedException if a store has the file open
     */
    public static VerifyReport verify(Path path) {
        return verify(path, Progress.NONE);
    }

    /**
     * {@link #verify(Path)}, telling {@code progress} how far the check has got (see {@link
     * HtodStore#verify(Progress)}); to follow the open's recovery too, open the store with {@link
     * Builder#progress} and verify it.
     */
    public static VerifyReport verify(Path path, Progress progress) {
        Objects.requireNonNull(progress, "progress");
        try (HtodStore store = builder(path).createIfMissing(false).open()) {
            return store.verify(progress);
        } catch (CorruptStoreException e) {
            return new VerifyReport(0, 0, 0, 0, List.of(new VerifyReport.Problem(e.offset(), e.getMessage())));
        }
    }

    /**
     * Compacts the closed store in the file {@code path}: rewrites its live entries, map by map
     * with batch allocation (OBA), into a new store laid out as it is (storage method, grain,
     * allocator parameters, log size), verifies that, and renames it over {@code path}
     * atomically. Expired entries are dropped. On any failure (the disk full) the store is left
     * as it was and the new file removed. Offline only: the store must not be open elsewhere.
     *
     * @throws NotAStoreException if {@code path} holds no store
     * @throws org.htod.core.StoreLockedException if a store has the file open
     */
    public static CopyReport compact(Path path, Progress progress) {
        Objects.requireNonNull(path, "path");
        return StoreOps.compact(path, Objects.requireNonNull(progress, "progress"), StoreOps.FILES);
    }

    /**
     * Copies the closed store in {@code source} to the new file {@code target} (which must not
     * exist): its live entries rewritten, with batch allocation, into a store laid out as it is,
     * closed cleanly, verified, then renamed into place. The source is opened in the mode it was
     * last opened in and closed cleanly again. To copy a store that is open in this process, use
     * {@link HtodStore#copyTo}.
     */
    public static CopyReport copy(Path source, Path target, Progress progress) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(progress, "progress");
        return StoreOps.copy(source, target, progress, StoreOps.FILES);
    }

    /**
     * Writes every entry that can be read from the damaged store in {@code damaged} into a new
     * store at {@code target} (which must not exist), leaving {@code damaged} untouched. First
     * it walks the maps of the store opened read-only as any open does (a log-mode store's log
     * replayed), the writes of its recovery held in memory; where they would pass what a
     * read-only open holds, of a copy of the file opened to write. When the walk reads every map,
     * nothing is lost. The file is read under a shared lock, so a store open elsewhere is refused.
     * Otherwise it scans the heap block by
     * block and keeps every entry whose checksums hold, named after its map where the map's
     * catalog entry survived ({@code salvaged-<table id>} where not); a key found twice keeps its
     * higher version. A scan cannot see changes that only the log held; and in log mode, where the
     * heap keeps its free blocks in its checkpoint rather than in the blocks' headers, the blocks
     * of removed and replaced entries still read as entries: a replaced value loses to its newer
     * version, but a removed key comes back with its last value.
     *
     * @throws org.htod.core.StoreLockedException if a store has the file open
     */
    public static CopyReport salvage(Path damaged, Path target, Progress progress) {
        Objects.requireNonNull(damaged, "damaged");
        Objects.requireNonNull(target, "target");
        return StoreOps.salvage(damaged, target, Objects.requireNonNull(progress, "progress"));
    }

    /**
     * A builder for a store on {@code device}. The store owns the device: closing the store closes
     * it, and lets go of it (a closed store keeps none of the device's memory reachable; a {@code
     * MemoryDevice} keeps its bytes for {@code reopen()} all the same).
     */
    public static Builder builder(BlockDevice device) {
        Objects.requireNonNull(device, "device");
        return new Builder(device.name(), null, (createIfMissing, mapReads, readOnly) -> readOnly
                ? new OverlayDevice(device) : device);
    }

    /** Opens the device of a builder when the store is opened. */
    @FunctionalInterface
    interface DeviceOpener {
        /**
         * {@code mapReads}: the builder's {@link Builder#mapReads}, for a device the opener opens;
         * {@code readOnly}: the builder's {@link Builder#readOnly}.
         */
        BlockDevice open(boolean createIfMissing, boolean mapReads, boolean readOnly);
    }

    /** Options of a store; each setter checks its value at once. */
    public static final class Builder {
        private final String where;
        /** The file of the store, or null if the builder was given a device. */
        private final Path path;
        private final DeviceOpener opener;
        private final ContainerConfig.Builder container = ContainerConfig.builder();
        private Durability durability = Durability.SYNC;
        private Duration syncInterval = Duration.ofSeconds(1);
        private boolean createIfMissing = true;
        private Clock clock = Clock.systemUTC();
        private int loadPermille = HashtableOnDisk.DEFAULT_LOAD_PERMILLE;
        private long cacheSize = defaultCacheSize();
        private int maxPendingLinks = TableOptions.DEFAULT_MAX_PENDING_LINKS;
        private boolean direct;
        private boolean asStored;
        private long bufferSize = defaultBufferSize();
        private int installBatch = 4096;
        private long hashKeySeed;
        private int placeValuesFrom;
        /**
         * 0: the mode's own, {@link TableOptions#DEFAULT_DOUBLING_MIN_BATCH} in direct mode, {@link
         * TableOptions#LOGGED_DOUBLING_MIN_BATCH} in log mode.
         */
        private int doublingMinBatch;
        private Progress progress = Progress.NONE;
        private boolean mapReads = true;
        private boolean readOnly;

        private Builder(String where, Path path, DeviceOpener opener) {
            this.where = where;
            this.path = path;
            this.opener = opener;
        }

        /** Heap storage method of a new store; default TS. */
        public Builder storageMethod(StorageMethod method) {
            container.storageMethod(Objects.requireNonNull(method, "method").core);
            return this;
        }

        /** Allocation unit of a new store's heap in bytes: a multiple of 64; default 512. */
        public Builder grain(int bytes) {
            container.grain(bytes);
            return this;
        }

        /** Quick lists of a new store (sizes grain .. maxQuickList * grain); default 75. */
        public Builder maxQuickList(int lists) {
            container.maxQuickList(lists);
            return this;
        }

        /** Bytes a free block may exceed a request by and still be used whole; default 2000. */
        public Builder acceptableWaste(int bytes) {
            container.acceptableWaste(bytes);
            return this;
        }

        /** Smallest free block batch allocation (OBA, used by putAll) places entries into; default 8192. */
        public Builder obaThreshold(int bytes) {
            container.obaThreshold(bytes);
            return this;
        }

        /** Bytes of a new store's log region (a multiple of 4096, or 0); default 64 MiB. */
        public Builder logSize(long bytes) {
            container.logSize(bytes);
            return this;
        }

        /** Bytes a new store's heap may grow to; by default the device's room, or 1 TiB on a file. */
        public Builder heapCapacity(long bytes) {
            container.heapCapacity(bytes);
            return this;
        }

        /**
         * Direct mode: changes go straight into the tables, each linked in place after a sync that
         * makes its entry durable, instead of through the log and the write buffer; a crash reopen
         * then walks every table. Default false. Atomic batches ({@link HtodStore#batch}) need
         * the log.
         */
        public Builder directMode(boolean direct) {
            this.direct = direct;
            return this;
        }

        /**
         * Whether an existing store opens in the mode it was last opened in (direct or log),
         * instead of the mode {@link #directMode} says: what a tool that only reads a store
         * wants, since opening a direct-mode store in log mode starts its log for good. A new
         * store is created as {@link #directMode} says. Default false.
         */
        public Builder modeAsStored(boolean asStored) {
            this.asStored = asStored;
            return this;
        }

        /**
         * Bytes of memory for the write buffer (log mode): changes logged but not yet installed in
         * the tables, which reads look into first; writers wait when it is full. Default {@link
         * #DEFAULT_BUFFER_SIZE}, less in a small JVM.
         */
        public Builder bufferSize(long bytes) {
            if (bytes < 1 << 16) {
                throw new IllegalArgumentException("bufferSize must be at least 64 KiB, found " + bytes);
            }
            this.bufferSize = bytes;
            return this;
        }

        /**
         * Log mode: a put of a value of at least {@code bytes} bytes writes the key's entry into a
         * heap block of its own before it is logged, and its log record names the block instead of
         * carrying the value; the install then only links the block. A large value so reaches the
         * disk once, not in the log and again in the heap, at the price of a commit that syncs the
         * device rather than the log's frames alone. 0 (the default) places no value.
         */
        public Builder placeValuesFrom(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("placeValuesFrom must be 0 (never) or a value size, found " + bytes);
            }
            this.placeValuesFrom = bytes;
            return this;
        }

        /** Internal tuning, for tests: the most keys one install of the write layer takes. */
        Builder installBatch(int keys) {
            this.installBatch = keys;
            return this;
        }

        /**
         * For tests only: the hash keys of the tables the store creates come from a generator
         * seeded with {@code seed}, not from {@code SecureRandom}, so that a test's buckets replay
         * (see {@link TableOptions#hashKeySeed}); 0, the default, draws them at random.
         */
        Builder hashKeySeed(long seed) {
            this.hashKeySeed = seed;
            return this;
        }

        /** When writes are durable; default {@link Durability#SYNC}. */
        public Builder durability(Durability durability) {
            this.durability = Objects.requireNonNull(durability, "durability");
            return this;
        }

        /** How often {@link Durability#ASYNC} syncs; default 1 second. */
        public Builder syncInterval(Duration interval) {
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("syncInterval must be positive, found " + interval);
            }
            this.syncInterval = interval;
            return this;
        }

        /** Whether {@link #open()} formats an empty device; default true. */
        public Builder createIfMissing(boolean create) {
            this.createIfMissing = create;
            return this;
        }

        /**
         * Entries per bucket above which a map's table doubles, for maps created from now on;
         * default 0.75. Lower means shorter chains (fewer reads per lookup) and a larger bucket
         * array (8 bytes a bucket).
         */
        public Builder loadFactor(double entriesPerBucket) {
            if (!(entriesPerBucket >= 0.1 && entriesPerBucket <= 10)) {
                throw new IllegalArgumentException("loadFactor must be between 0.1 and 10, found " + entriesPerBucket);
            }
            this.loadPermille = (int) Math.round(entriesPerBucket * 1000);
            return this;
        }

        /**
         * Bytes of memory for what reads keep of the disk; 0 for none. At most a quarter holds the
         * tables' bucket slots, 8 bytes a bucket (about 11 bytes an entry at the default load
         * factor), so that a get whose entry is cached reads nothing from the device; slots beyond
         * it are read from the device. The rest, what the slots leave, holds the entry cache: the
         * entries read (whole up to a 128th of what the slots leave at least, else their first 4
         * KiB), evicted in CLOCK order (a recently read entry gets a second round).
         * Default a sixteenth of the JVM's largest heap ({@code Runtime.maxMemory()}), at least 8 MiB
         * and at most 1 GiB. See {@code docs/READ-PATH.md}.
         */
        public Builder cacheSize(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("cacheSize must be at least 0 bytes, found " + bytes);
            }
            this.cacheSize = bytes;
            return this;
        }

        /**
         * For a store in a file: whether reads are copied out of memory mappings of the file where
         * they can, with no system call per read, instead of read through its channel. The
         * mappings cover what the file holds, 1 GiB a mapping, follow it as it grows, and are
         * unmapped when the store closes. They take address space, not memory: what they show is
         * the operating system's page cache, as a read through the channel would fill it. Only
         * while the file is at most half the machine's (or container's) memory, where a fault's
         * read-ahead costs little, and on Java 17 to 23. Default on; ignored for a store on a
         * {@link BlockDevice} given to the builder. See {@code docs/READ-PATH.md}.
         */
        public Builder mapReads(boolean map) {
            this.mapReads = map;
            return this;
        }

        /**
         * Opens the store as it is on its file or device, changing nothing there: the file is
         * opened through a read-only descriptor under a shared lock (a store open elsewhere
         * refuses it, other read-only opens may share it), and what the open writes to recover
         * the store after a crash, and what a {@link HtodStore#verify() verify} writes, is kept in
         * memory ({@code OverlayDevice}, at most a quarter of the JVM's memory: past it the open
         * fails with {@link org.htod.core.StoreFullException}) and gone at close. The store opens
         * in the mode it was last opened in, and in log mode runs no flusher: what a crash left in
         * the log is replayed into the write buffer and stays there. Reads see the store as recovered;
         * writes, batches, a map that does not exist and compaction throw {@link
         * ReadOnlyStoreException}. For inspecting a store (the command-line tool's {@code info},
         * {@code verify}, {@code dump}) without replaying its log into it, so that a crash's
         * evidence stays for the next look, and for a file the process may not write. Never creates
         * a store. Default off.
         */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /**
         * Internal tuning, for tests that need small flushes and doublings of many batches from
         * small tables: links waiting before a flush, and the fewest buckets a doubling batch moves.
         */
        Builder tuning(int maxPendingLinks, int doublingMinBatch) {
            this.maxPendingLinks = maxPendingLinks;
            this.doublingMinBatch = doublingMinBatch;
            return this;
        }

        /**
         * Told how far the long parts of {@link #open()} have got, on the opening thread: after an
         * unclean shutdown, in log mode the bytes of the log replayed (of the log region's size, an
         * upper bound); in direct mode the blocks the heap's recovery scans and the tables'
         * recovery then meets (its walks and its sweep). A clean open reports nothing. Default
         * {@link Progress#NONE}.
         */
        public Builder progress(Progress progress) {
            this.progress = Objects.requireNonNull(progress, "progress");
            return this;
        }

        /** The clock entry expiry is measured by; default the system clock. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Opens the store, creating it if the device is empty and {@link #createIfMissing} allows,
         * and recovering it if it was not closed cleanly ({@link HtodStore#recoveryReport()}).
         *
         * <p>A store in a file: once it is open, and so locked, the files a copy or compaction into
         * its name left when its process died ({@code NAME.partial-HEX}, none of them locked by a
         * copy still going on) are deleted.
         *
         * @throws NotAStoreException if the device is empty and creation is off, or holds something else
         */
        public HtodStore open() {
            HtodStore s = openStore();
            if (readOnly) {
                s.markReadOnly();
            } else if (path != null) {
                StoreOps.removeLeftovers(path);
            }
            return s;
        }

        private HtodStore openStore() {
            ContainerConfig cfg = container.build();
            boolean create = createIfMissing && !readOnly;
            // Counting for stats() and metrics; let go of at close (StoreDevice)
            CountingDevice device = new CountingDevice(new StoreDevice(opener.open(create, mapReads, readOnly)), false);
            boolean direct = this.direct;
            // Read-only, a store opens in the mode it was last opened in: turning a direct-mode store
            // into a log-mode one would format its log region, all of it in memory.
            if ((asStored || readOnly) && device.size() > 0) {
                try {
                    Superblock sb = Container.open(device).superblock();
                    direct = sb.rootCatalog() != 0 && !sb.log().active();
                } catch (RuntimeException | Error e) {
                    closeAfterFailedOpen(device, e);
                    throw e;
                }
            }
            if (!direct) {
                try {
                    Clock c = clock;
                    TableOptions topts = new TableOptions(false, c::millis, loadPermille, cacheSize, maxPendingLinks,
                            doublingMinBatch != 0 ? doublingMinBatch : TableOptions.LOGGED_DOUBLING_MIN_BATCH,
                            TableOptions.DEFAULT_SLOT_RUN_BYTES, hashKeySeed);
                    WriteLayer.Options wopts = new WriteLayer.Options(WriteLayer.Durability.valueOf(durability.name()),
                            bufferSize, Math.max(1, syncInterval.toMillis()), installBatch, placeValuesFrom, readOnly);
                    // An online compaction opens the file again with these very options.
                    // By the file's real name: a compaction renames its new file over that name,
                    // and over a link's it replaced the link, leaving the file it named stale.
                    HtodStore.Reopen reopen = path == null || readOnly ? null : new HtodStore.Reopen(StoreOps.realPath(path),
                            mapReads, dev -> LoggedOpen.open(dev, false, cfg, topts, wopts, c::millis));
                    return new HtodStore(LoggedOpen.open(device, create, cfg, topts, wopts, c::millis,
                            progress::step),
                            durability, clock, device, reopen);
                } catch (RuntimeException | Error e) {
                    closeAfterFailedOpen(device, e); // an open that failed before it began has written nothing
                    throw e;
                }
            }
            Storage storage;
            try {
                if (device.size() == 0) {
                    if (!create) {
                        throw new NotAStoreException(where + " is empty and createIfMissing is off");
                    }
                    storage = Storage.create(device, cfg);
                } else {
                    storage = Storage.prepare(device, progress::step);
                    if (storage.superblock().log().active()) {
                        // Its latest changes may live in the log only, and its heap is described by
                        // the log's checkpoint, not by block headers: direct mode would lose the
                        // first and misread the second. Refused before anything is written.
                        throw new HtodException(where + " is a log-mode store (its log holds changes since its last"
                                + " checkpoint): open it without directMode(true)");
                    }
                }
            } catch (RuntimeException | Error e) {
                closeAfterFailedOpen(device, e);
                throw e;
            }
            TableStore tables;
            try {
                Clock c = clock;
                tables = TableStore.open(storage, new TableOptions(durability == Durability.SYNC, c::millis,
                        loadPermille, cacheSize, maxPendingLinks,
                        doublingMinBatch != 0 ? doublingMinBatch : TableOptions.DEFAULT_DOUBLING_MIN_BATCH,
                        TableOptions.DEFAULT_SLOT_RUN_BYTES, hashKeySeed),
                        progress::step);
            } catch (RuntimeException | Error e) {
                // Not storage.close(): that would mark the store clean and skip the tables' recovery
                // next time. An open that failed before the storage began has written nothing.
                closeAfterFailedOpen(device, e);
                throw e;
            }
            return new HtodStore(tables, durability, syncInterval, clock, device, readOnly);
        }

        /**
         * Closes the device of an open that failed, whatever failed: an {@code Error} too (an
         * {@code OutOfMemoryError} in a log's replay, one thrown by a progress listener), which
         * left the file locked for the process's life. A failure to close is kept beside the cause.
         */
        private static void closeAfterFailedOpen(CountingDevice device, Throwable cause) {
            try {
                device.close();
            } catch (RuntimeException | Error e) {
                cause.addSuppressed(e);
            }
        }
    }
}
