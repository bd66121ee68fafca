package org.htod.core.alloc;

import java.util.HashMap;
import java.util.Map;
import org.htod.core.CorruptStoreException;

/**
 * Checks a heap against its own invariants by reading every header: blocks tile the heap from
 * the first block to the tail without gap or overlap; every block the allocator holds as free is
 * a free block of that size on disk; nothing it holds as free is allocated on disk; the counters
 * match what is on disk. Free blocks on disk that the allocator does not know are reported as
 * leaked (PL/PFL after a crash, until the next coalescing), not as errors.
 */
final class HeapVerifier {
    private HeapVerifier() {}

    static HeapVerifyReport verify(Heap h) {
        h.lock.lock();
        try {
            Map<Long, FreeBlock> free = new HashMap<>();
            for (FreeBlock b : h.lists.all()) {
                if (free.put(b.addr, b) != null) {
                    throw new CorruptStoreException("block at " + b.addr + " is on the free lists twice", b.addr);
                }
            }
            long[] c = new long[6]; // allocated blocks, allocated bytes, free blocks, leaked blocks, leaked bytes, requested
            HeaderScanner s = new HeaderScanner(h);
            s.scan(h.start, h.tail, (addr, hd) -> {
                FreeBlock f = free.remove(addr);
                if (hd.allocated) {
                    if (f != null) {
                        throw new CorruptStoreException("block at " + addr + " of " + hd.size
                                + " bytes is allocated on disk but on the free lists in memory", addr);
                    }
                    c[0]++;
                    c[1] += hd.size;
                    c[5] += BlockHeader.SIZE + hd.length;
                } else if (f != null) {
                    if (f.size != hd.size) {
                        throw new CorruptStoreException("free block at " + addr + ": expected size " + f.size
                                + " as the free lists hold it, found " + hd.size + " on disk", addr);
                    }
                    c[2]++;
                } else {
                    c[3]++;
                    c[4] += hd.size;
                }
            });
            if (!free.isEmpty()) {
                FreeBlock b = free.values().iterator().next();
                throw new CorruptStoreException(free.size() + " blocks on the free lists are not blocks on disk, e.g. "
                        + b.addr + " of " + b.size + " bytes", b.addr);
            }
            return new HeapVerifyReport(c[0], c[1], c[5], c[2], h.lists.freeBytes(), c[3], c[4], h.tail - h.start,
                    h.highWater - h.start, s.headersRead);
        } finally {
            h.lock.unlock();
        }
    }
}
