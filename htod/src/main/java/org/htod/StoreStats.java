package org.htod;

import java.util.Map;

/**
 * A snapshot of a store's figures, taken by {@link HtodStore#stats()}: what the store is (its
 * layout), what it holds, what its maps were asked to do, what that cost the device, how the write
 * layer groups and absorbs writes, how fragmented the heap is, how often the entry cache served a
 * read, and what the last open found. Immutable; each figure is exact when read, the set of them
 * not taken at one instant (writers are not stopped). Counters count from the store's open.
 *
 * <p>Every part is a record of numbers, strings and booleans, so that a JSON mapper (Jackson)
 * writes it as it is; {@link RecoveryReport}'s durations are {@link java.time.Duration}s.
 *
 * @param layout what was fixed when the store was created, and how it is open
 * @param operations what the maps of this store were asked to do since it opened
 * @param entries entries of each map, by name (expired entries not yet removed included)
 * @param space bytes of the file and of the heap
 * @param fragmentation the heap's fragmentation, as the core paper (§3.3.1) defines it
 * @param device I/O through the store's device since it opened
 * @param writeLayer the write layer's figures; null in direct mode
 * @param cache the entry cache's hits and misses
 * @param lastRecovery what the last open took and found
 */
public record StoreStats(
        Layout layout,
        Operations operations,
        Map<String, Long> entries,
        Space space,
        Fragmentation fragmentation,
        DeviceIo device,
        WriteLayerFigures writeLayer,
        Cache cache,
        RecoveryReport lastRecovery) {

    public StoreStats {
        entries = Map.copyOf(entries);
    }

    /** Entries of all maps together. */
    public long totalEntries() {
        return entries.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * What the store is: fixed when it was created (format, storage method, allocator parameters,
     * regions) and how this opening runs it (log or direct mode, durability).
     *
     * @param name the file or device
     * @param formatVersion on-disk format version ({@code docs/FORMAT.md})
     * @param storageMethod the heap's storage method: TS, PL or PFL
     * @param logged whether changes go through the log (log mode) rather than straight into the tables
     * @param durability when writes are durable
     * @param grain allocation unit of the heap, bytes
     * @param maxQuickList quick lists, for blocks of 1 to {@code maxQuickList} grains
     * @param acceptableWaste bytes a free block may exceed a request by and still be used whole
     * @param obaThreshold smallest free block that batch allocation (OBA) places entries into
     * @param logBytes bytes of the log region
     * @param heapOffset where the heap region starts
     * @param heapCapacity bytes the heap may grow to
     * @param sectorSize the device's unit of atomic writes
     * @param createdMillis when the store was created, epoch milliseconds
     */
    public record Layout(String name, int formatVersion, String storageMethod, boolean logged, Durability durability,
            int grain, int maxQuickList, int acceptableWaste, int obaThreshold, long logBytes, long heapOffset,
            long heapCapacity, int sectorSize, long createdMillis) {}

    /**
     * The maps' operations since the store opened: reads ({@code get}, {@code containsKey}), writes
     * that put a value (each entry of a {@code putAll} or a batch counts), writes that removed one,
     * and conditional writes that found nothing to do.
     */
    public record Operations(long gets, long puts, long removes, long unchanged) {}

    /**
     * Bytes of the store.
     *
     * @param fileBytes bytes the file or device holds
     * @param heapUsedBytes bytes of the heap from its first block to its tail
     * @param heapCapacityBytes bytes the heap may grow to
     * @param highWaterBytes most heap bytes ever in use (the tail's high-water mark)
     * @param allocatedBlocks heap blocks allocated
     * @param allocatedBytes bytes of the allocated blocks
     * @param requestedBytes bytes asked for by those allocations (header and payload, unrounded)
     * @param freeBlocks free blocks below the tail
     * @param freeBytes bytes of the free blocks
     */
    public record Space(long fileBytes, long heapUsedBytes, long heapCapacityBytes, long highWaterBytes,
            long allocatedBlocks, long allocatedBytes, long requestedBytes, long freeBlocks, long freeBytes) {}

    /**
     * The core paper's fragmentation figures (§3.3.1): internal {@code f_i} = storage allocated over
     * storage requested, external {@code f_e} = the most storage ever in use over storage
     * allocated, total {@code f_t = f_i · f_e}. 1.0 is none.
     */
    public record Fragmentation(double internal, double external, double total) {}

    /** Device calls and bytes since the store opened; {@code syncs} are the device's flushes to stable storage. */
    public record DeviceIo(long reads, long writes, long bytesRead, long bytesWritten, long syncs) {}

    /**
     * The write layer (log mode): group commit, the write buffer, installs and checkpoints.
     *
     * @param groupCommits writes of the log, each a group of records made durable together
     * @param recordsCommitted records those groups carried
     * @param meanGroupSize records per group commit (0 before the first)
     * @param bufferBytes bytes of changes in the write buffer now
     * @param bufferCapacity bytes the buffer may hold before writers wait
     * @param bufferFill {@code bufferBytes / bufferCapacity}
     * @param bufferedKeys keys with a change in the buffer now
     * @param changesBuffered changes put in the buffer since the store opened
     * @param changesAbsorbed changes that replaced an earlier change of their key still in the buffer,
     *     so that only the later one is installed
     * @param absorption {@code changesAbsorbed / changesBuffered}
     * @param installs install batches written into the tables
     * @param installedKeys keys those batches wrote
     * @param checkpoints checkpoints taken
     * @param doublingSteps doubling steps of the tables
     * @param logUsedBytes bytes of the log region holding records not yet released by a checkpoint
     * @param logRegionBytes bytes of the log region
     * @param bufferWaits writes that waited for room in the buffer: the flusher's installs fell
     *     behind the writers
     * @param bufferWaitSeconds seconds those writes waited, in all
     * @param logWaits writes that waited for room in the log: its checkpoints fell behind the writers
     * @param logWaitSeconds seconds those writes waited, in all
     * @param installReads chain entries the installs read from the device to find their keys
     * @param installReadsCached chain entries the installs found in the entry cache instead: the
     *     installation reads it avoided
     * @param flusherBusySeconds seconds the flusher thread spent at work (installs with their syncs,
     *     doublings, checkpoints), not waiting for work, counted a batch at a time: near the time
     *     elapsed, one flusher sets the writers' pace. Wall time: its waits for what others hold
     *     (the stripe of a writer in a group commit, the install lock, room in the log) count too,
     *     and where threads outnumber processors, its waits for one
     */
    public record WriteLayerFigures(long groupCommits, long recordsCommitted, double meanGroupSize, long bufferBytes,
            long bufferCapacity, double bufferFill, long bufferedKeys, long changesBuffered, long changesAbsorbed,
            double absorption, long installs, long installedKeys, long checkpoints, long doublingSteps,
            long logUsedBytes, long logRegionBytes, long bufferWaits, double bufferWaitSeconds, long logWaits,
            double logWaitSeconds, long installReads, long installReadsCached, double flusherBusySeconds) {}

    /** Lookups of the entry cache that found an entry's bytes, and those that read the device; {@code hitRatio} in 0..1. */
    public record Cache(long hits, long misses, double hitRatio) {}
}
