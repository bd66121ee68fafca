package org.htod.core.alloc;

import org.htod.core.container.StorageMethod;

/**
 * Where the heap lives in the container and how PMFLF is tuned (defaults: the core paper's
 * Table 4). {@code coalesceThreshold} is the external fragmentation above which deferred
 * coalescing runs even though allocations still succeed, and above which a batch (OBA) splits any
 * free block before it grows the tail.
 */
public record HeapOptions(
        StorageMethod method,
        long heapOffset,
        long heapCapacity,
        long storeId,
        int grain,
        int maxQuickList,
        int acceptableWaste,
        int obaThreshold,
        double coalesceThreshold) {

    public HeapOptions {
        if (grain < 64 || grain % 64 != 0) {
            throw new IllegalArgumentException("grain must be a positive multiple of 64, got " + grain);
        }
        if (maxQuickList < 1) {
            throw new IllegalArgumentException("maxQuickList must be at least 1, got " + maxQuickList);
        }
        if (acceptableWaste < 0 || obaThreshold < 0) {
            throw new IllegalArgumentException("acceptableWaste and obaThreshold must not be negative");
        }
        if (heapOffset % 4096 != 0 || heapCapacity < Checkpoint.AREA_SIZE + grain) {
            throw new IllegalArgumentException("heap at " + heapOffset + " of " + heapCapacity
                    + " bytes: the offset must be 4096-aligned and the heap hold its checkpoint area and one block");
        }
        if (coalesceThreshold <= 1.0) {
            throw new IllegalArgumentException("coalesceThreshold must be above 1.0, got " + coalesceThreshold);
        }
    }

    /** The paper's Table 4 configuration (grain 512, maxQL 75, w 2000) with T = 8 KiB. */
    public static HeapOptions defaults(StorageMethod method, long heapOffset, long heapCapacity, long storeId) {
        return new HeapOptions(method, heapOffset, heapCapacity, storeId, 512, 75, 2000, 8192, 1.5);
    }
}
