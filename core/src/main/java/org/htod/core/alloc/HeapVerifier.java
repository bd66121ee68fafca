package org.htod.core.alloc;

import java.util.HashMap;
import java.util.Map;
import org.htod.core.CorruptStoreException;
import org.htod.core.StepListener;

/**
 * Checks a heap against its own invariants by reading every header: blocks tile the heap from
 * the first block to the tail without gap or overlap; every block the allocator holds as free is
 * a free block of that size on disk; nothing it holds as free is allocated on disk; the counters
 * match what is on disk. Free blocks on disk that the allocator does not know are reported as
 * leaked, not as errors: a crash open rebuilds the free lists from a scan, so none should be.
 */
final class HeapVerifier {
    private HeapVerifier() {}

    static HeapVerifyReport verify(Heap h, StepListener progress, long total) {
        if (h.logged()) {
            return verifyLogged(h, progress, total);
        }
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
            s.progress = progress;
            s.total = total;
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

    /**
     * Log mode: the allocator's state in memory is the truth (the log recovers it), and a free
     * block's header on disk may be stale. So the walk goes by memory: a free block is skipped by
     * its size, and everything else from the first block to the tail must be allocated blocks,
     * each with a valid header of an allocated block (every allocation writes one whole), tiling
     * the space between the free blocks without gap or overlap; the counters must match.
     */
    static HeapVerifyReport verifyLogged(Heap h, StepListener progress, long total) {
        h.lock.lock();
        try {
            java.util.TreeMap<Long, FreeBlock> free = new java.util.TreeMap<>();
            for (FreeBlock b : h.lists.all()) {
                if (free.put(b.addr, b) != null) {
                    throw new CorruptStoreException("block at " + b.addr + " is on the free lists twice", b.addr);
                }
            }
            HeaderScanner s = new HeaderScanner(h);
            s.progress = progress;
            s.total = total;
            long allocated = 0;
            long allocatedBytes = 0;
            long requested = 0;
            long pos = h.start;
            while (pos < h.tail) {
                FreeBlock f = free.get(pos);
                if (f != null) {
                    pos += f.size;
                    continue;
                }
                java.util.Map.Entry<Long, FreeBlock> before = free.lowerEntry(pos);
                if (before != null && before.getKey() + before.getValue().size > pos) {
                    throw new CorruptStoreException("free blocks overlap at " + pos, pos);
                }
                BlockHeader hd = s.headerAt(pos);
                if (hd == null || !hd.allocated) {
                    throw new CorruptStoreException("expected an allocated block at offset " + pos + " in " + h.dev.name()
                            + " (not free in memory), found " + Heap.describe(hd), pos);
                }
                java.util.Map.Entry<Long, FreeBlock> after = free.higherEntry(pos);
                if (pos + hd.size > h.tail || (after != null && pos + hd.size > after.getKey())) {
                    throw new CorruptStoreException("allocated block at offset " + pos + " of " + hd.size
                            + " bytes overlaps free space or the tail at " + h.tail, pos);
                }
                allocated++;
                allocatedBytes += hd.size;
                requested += BlockHeader.SIZE + hd.length;
                pos += hd.size;
            }
            if (pos != h.tail) {
                throw new CorruptStoreException("blocks end at " + pos + ", expected the tail at " + h.tail, pos);
            }
            // Bytes only: PFL's own recovery knows the bytes allocated but not the count of blocks.
            if (allocatedBytes != h.allocatedBytes) {
                throw new CorruptStoreException("the heap of " + h.dev.name() + " counts " + h.allocatedBytes
                        + " allocated bytes; the walk finds " + allocated + " blocks of " + allocatedBytes, -1);
            }
            return new HeapVerifyReport(allocated, allocatedBytes, requested, free.size(), h.lists.freeBytes(), 0, 0,
                    h.tail - h.start, h.highWater - h.start, s.headersRead);
        } finally {
            h.lock.unlock();
        }
    }

    /** {@link Heap#forEachAllocated}: a logged heap by its free blocks in memory, a direct one by its headers. */
    static void forEachAllocated(Heap h, Heap.BlockVisitor visitor) {
        long limit;
        boolean collect;
        h.lock.lock();
        try {
            limit = h.tail;
            collect = h.rebuildFreeByScan && h.recoveryWritesPending && !h.logged();
        } finally {
            h.lock.unlock();
        }
        if (h.logged()) {
            forEachAllocatedLogged(h, limit, visitor);
            return;
        }
        HeaderScanner s = new HeaderScanner(h);
        // A PL or PFL open pending after a recovery by lists: the free blocks this scan meets are
        // kept for finishOpen, which would otherwise read every header again (HeapRecovery.FreeScan).
        HeapRecovery.FreeScan free = collect ? new HeapRecovery.FreeScan(s, limit) : null;
        s.scan(h.start, limit, (addr, hd) -> {
            if (free != null) {
                free.visit(addr, hd);
            }
            if (hd.allocated) {
                visitor.visit(h.handle(addr, hd.size), hd.length);
            }
        });
        if (free != null) {
            HeapRecovery.offer(h, free);
        }
    }

    /** Visits every allocated block of a logged heap (walking by memory's free blocks): see {@link #verifyLogged}. */
    private static void forEachAllocatedLogged(Heap h, long limit, Heap.BlockVisitor v) {
        java.util.TreeMap<Long, FreeBlock> free = new java.util.TreeMap<>();
        h.lock.lock();
        try {
            for (FreeBlock b : h.lists.all()) {
                free.put(b.addr, b);
            }
        } finally {
            h.lock.unlock();
        }
        HeaderScanner s = new HeaderScanner(h);
        long pos = h.start;
        while (pos < limit) {
            FreeBlock f = free.get(pos);
            if (f != null) {
                pos += f.size;
                continue;
            }
            BlockHeader hd = s.headerAt(pos);
            if (hd == null || !hd.allocated) {
                throw new CorruptStoreException("expected an allocated block at offset " + pos + " in " + h.dev.name()
                        + ", found " + Heap.describe(hd), pos);
            }
            v.visit(h.handle(pos, hd.size), hd.length);
            pos += hd.size;
        }
    }
}
