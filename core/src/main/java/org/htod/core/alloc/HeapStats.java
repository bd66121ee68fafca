package org.htod.core.alloc;

/**
 * Space accounting of a heap, with the fragmentation figures as the core paper (§3.3.1) defines
 * them:
 *
 * <ul>
 *   <li>internal {@code f_i = a / b}: storage allocated over storage requested (header + payload,
 *       unrounded);
 *   <li>external {@code f_e = M / a}: the most heap storage ever in use (the high-water mark of
 *       the tail) over storage allocated;
 *   <li>total {@code f_t = f_i · f_e}.
 * </ul>
 *
 * After a PL or PFL crash recovery, which reads lists instead of every header, the allocated and
 * requested figures are estimates (requested is taken equal to allocated) until the next
 * coalescing scan.
 */
public record HeapStats(
        long allocatedBlocks,
        long allocatedBytes,
        long requestedBytes,
        long freeBlocks,
        long freeBytes,
        long tailOffset,
        long usedBytes,
        long highWaterBytes,
        long capacityBytes,
        long coalesces) {

    public double internalFragmentation() {
        return internal(allocatedBytes, requestedBytes);
    }

    public double externalFragmentation() {
        return external(highWaterBytes, allocatedBytes);
    }

    /** Paper §3.3.1: {@code f_i = a / b}, storage allocated over storage requested. */
    static double internal(long allocated, long requested) {
        return requested == 0 ? 1.0 : (double) allocated / requested;
    }

    /** Paper §3.3.1: {@code f_e = M / a}, the most storage ever in use over storage allocated. */
    static double external(long highWater, long allocated) {
        return allocated == 0 ? 1.0 : (double) highWater / allocated;
    }

    public double totalFragmentation() {
        return internalFragmentation() * externalFragmentation();
    }
}
