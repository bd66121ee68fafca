package org.htod.table;

import java.util.function.LongSupplier;

/**
 * The options of one store's tables, fixed when it opens. Every knob is per store: two stores in
 * one process, or tests running side by side, never tune each other.
 *
 * @param syncEachWrite whether each write is made durable before it returns (durability SYNC)
 * @param clock epoch milliseconds, for entry expiry
 * @param loadPermille load factor of new tables, in thousandths
 * @param cacheBytes memory for the caches of reads, 0 for none: at most a quarter for the bucket slots held in
 *     memory (8 bytes a bucket), the rest, at least three quarters, for the entry cache (entries' bytes)
 * @param maxPendingLinks links or unlinked blocks that may wait in memory before a writer flushes them
 * @param doublingMinBatch fewest old buckets a doubling moves per batch (tests lower it to get doublings
 *     of many batches from small tables)
 * @param slotRunBytes bucket slots of one segment that a flush changes and that lie less than this many
 *     bytes apart are written as one run (see {@code SyncGate.writeSlotRun}); 0 writes every link alone
 *     (tests do, so that crashes fall between the links as they did)
 * @param hashKeySeed 0: each new table's hash key is drawn from {@code SecureRandom} (see {@link TableHash});
 *     otherwise, for tests only, the keys of the tables a store creates come from a generator seeded
 *     with it, so that a test's buckets, and the writes that follow from them, replay
 */
public record TableOptions(boolean syncEachWrite, LongSupplier clock, int loadPermille, long cacheBytes,
        int maxPendingLinks, int doublingMinBatch, int slotRunBytes, long hashKeySeed) {
    public static final int DEFAULT_MAX_PENDING_LINKS = 8192;
    public static final int DEFAULT_DOUBLING_MIN_BATCH = 1024;
    /**
     * Log mode's: a batch there holds no writer up (writers go to the log and the write buffer) but
     * costs a durable install record, so it moves more buckets; readers wait only while its links
     * are set in memory, a few milliseconds. A load of 27,800 objects into a fresh store took 63
     * doubling steps with 1,024 and 21 with 4,096.
     */
    public static final int LOGGED_DOUBLING_MIN_BATCH = 4096;
    /** A page: the kernel writes back whole pages, so the slots between a run's links cost the disk nothing. */
    public static final int DEFAULT_SLOT_RUN_BYTES = 4096;

    public TableOptions {
        if (cacheBytes < 0) {
            throw new IllegalArgumentException("cache size must be at least 0, found " + cacheBytes);
        }
        if (slotRunBytes < 0) {
            throw new IllegalArgumentException("slotRunBytes must be at least 0, found " + slotRunBytes);
        }
        if (maxPendingLinks < 1 || doublingMinBatch < 1) {
            throw new IllegalArgumentException("maxPendingLinks and doublingMinBatch must be at least 1, found "
                    + maxPendingLinks + " and " + doublingMinBatch);
        }
    }

    /** The defaults: no sync per write, the system clock, load 0.75, an 8 MiB cache, random hash keys. */
    public static TableOptions defaults() {
        return new TableOptions(false, System::currentTimeMillis, HashtableOnDisk.DEFAULT_LOAD_PERMILLE, 8L << 20,
                DEFAULT_MAX_PENDING_LINKS, DEFAULT_DOUBLING_MIN_BATCH, DEFAULT_SLOT_RUN_BYTES, 0);
    }

    /** The most bytes of bucket slots held in memory: a quarter of {@link #cacheBytes}. */
    long slotCacheBytes() {
        return cacheBytes / 4;
    }

    public TableOptions withSyncEachWrite(boolean v) {
        return new TableOptions(v, clock, loadPermille, cacheBytes, maxPendingLinks, doublingMinBatch,
                slotRunBytes, hashKeySeed);
    }

    public TableOptions withClock(LongSupplier v) {
        return new TableOptions(syncEachWrite, v, loadPermille, cacheBytes, maxPendingLinks, doublingMinBatch,
                slotRunBytes, hashKeySeed);
    }

    public TableOptions withLoadPermille(int v) {
        return new TableOptions(syncEachWrite, clock, v, cacheBytes, maxPendingLinks, doublingMinBatch,
                slotRunBytes, hashKeySeed);
    }

    public TableOptions withCacheBytes(long v) {
        return new TableOptions(syncEachWrite, clock, loadPermille, v, maxPendingLinks, doublingMinBatch,
                slotRunBytes, hashKeySeed);
    }

    public TableOptions withMaxPendingLinks(int v) {
        return new TableOptions(syncEachWrite, clock, loadPermille, cacheBytes, v, doublingMinBatch,
                slotRunBytes, hashKeySeed);
    }

    public TableOptions withSlotRunBytes(int v) {
        return new TableOptions(syncEachWrite, clock, loadPermille, cacheBytes, maxPendingLinks, doublingMinBatch,
                v, hashKeySeed);
    }

    public TableOptions withHashKeySeed(long v) {
        return new TableOptions(syncEachWrite, clock, loadPermille, cacheBytes, maxPendingLinks, doublingMinBatch,
                slotRunBytes, v);
    }

    public TableOptions withDoublingMinBatch(int v) {
        return new TableOptions(syncEachWrite, clock, loadPermille, cacheBytes, maxPendingLinks, v,
                slotRunBytes, hashKeySeed);
    }
}
