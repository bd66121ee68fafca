package org.htod.core.alloc;

/**
 * What {@link Heap#verify()} found on disk. {@code allocatedBytes + freeBytes + leakedBytes}
 * always equals {@code usedBytes}: the blocks tile the heap up to the tail.
 */
public record VerifyReport(
        long allocatedBlocks,
        long allocatedBytes,
        long freeBlocks,
        long freeBytes,
        long leakedBlocks,
        long leakedBytes,
        long usedBytes,
        long headersRead) {}
