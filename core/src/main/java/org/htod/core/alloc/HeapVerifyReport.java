package org.htod.core.alloc;

/**
 * What {@link Heap#verify()} found on disk. {@code allocatedBytes + freeBytes + leakedBytes}
 * always equals {@code usedBytes}: the blocks tile the heap up to the tail. The fragmentation
 * figures computed from it are exact, where {@link HeapStats} estimates internal fragmentation
 * after frees (a free learns the block's size from its handle, not its payload length).
 */
public record HeapVerifyReport(
        long allocatedBlocks,
        long allocatedBytes,
        long requestedBytes,
        long freeBlocks,
        long freeBytes,
        long leakedBlocks,
        long leakedBytes,
        long usedBytes,
        long highWaterBytes,
        long headersRead) {

    /** Paper §3.3.1: storage allocated over storage requested. */
    public double internalFragmentation() {
        return HeapStats.internal(allocatedBytes, requestedBytes);
    }

    /** Paper §3.3.1: the most storage ever in use over storage allocated. */
    public double externalFragmentation() {
        return HeapStats.external(highWaterBytes, allocatedBytes);
    }

    public double totalFragmentation() {
        return internalFragmentation() * externalFragmentation();
    }
}
