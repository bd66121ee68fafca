package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.htod.core.container.StorageMethod;

/**
 * Deferred coalescing (paper §2.4): merges every run of adjacent free blocks into one, and a run
 * that ends at the tail into the tail. It syncs first, so that every extent it merges is durable,
 * writes one header per merged run, relinks the PL/PFL disk lists, and ends with a checkpoint and
 * a sync: the tail may have moved back, and the checkpoint's stamp must cover every header left
 * past it. For PL and PFL it first makes a checkpoint with empty lists durable: the old lists may
 * name blocks that a merge swallows, and a crash before the relinked lists are checkpointed must
 * not bring them back (it only loses track of free space, which the next scan reclaims). In log
 * mode all of that is replaced by a merge in memory ({@link #mergeInMemory}).
 */
final class Coalescer {
    /** Fragmentation-triggered coalescing waits until at least this much is free: below it, a scan costs more than it saves. */
    static final long FRAGMENTATION_MIN_FREE = 4L << 20;

    private Coalescer() {}

    /** Coalesces now; the caller holds the heap's lock. */
    static void coalesce(Heap h) {
        if (h.logged()) {
            mergeInMemory(h);
        } else {
            mergeOnDisk(h);
        }
        h.freeAfterCoalesce = h.lists.freeBytes();
        h.freedSinceCoalesce = 0;
    }

    /**
     * Coalesces when external fragmentation passes the configured threshold and enough has
     * changed since the last time: in direct mode, free space grown by an eighth of the heap (a
     * merge there costs a scan of every header, and merging more often made the heap grow,
     * measured: merged space sits on larger lists, which PMFLF passes over for the tail); in log
     * mode, an eighth of the heap freed (a merge there is made in memory only).
     */
    static void ifFragmented(Heap h) {
        long used = h.tail - h.start;
        boolean changed = h.logged() ? h.freedSinceCoalesce > used / 8 : h.lists.freeBytes() - h.freeAfterCoalesce > used / 8;
        if (changed && overFragmented(h)) {
            coalesce(h);
        }
    }

    /**
     * Whether the heap's external fragmentation (its extent over the bytes allocated) is past
     * {@link HeapOptions#coalesceThreshold}, with more than a few MiB free: deferred coalescing is
     * then due, and OBA splits any free block before it grows the tail.
     */
    static boolean overFragmented(Heap h) {
        return h.allocatedBytes > 0 && h.lists.freeBytes() > FRAGMENTATION_MIN_FREE
                && (double) (h.tail - h.start) / h.allocatedBytes > h.opt.coalesceThreshold();
    }

    private static void mergeOnDisk(Heap h) {
        h.syncDevice();
        h.markDurable();
        boolean diskLists = h.method != StorageMethod.TS;
        if (diskLists) {
            reclaimByScan(h);
            h.writeCheckpoint(true);
            h.syncDevice();
        }
        List<FreeBlock> result = new ArrayList<>();
        forEachRun(h, (free, i, j, endOfRun) -> {
            FreeBlock first = free.get(i);
            if (endOfRun == h.tail) {
                h.tail = first.addr;
            } else if (j - i == 1) {
                result.add(first);
            } else {
                long s = ++h.stamp;
                FreeBlock merged = new FreeBlock(first.addr, endOfRun - first.addr, s,
                        h.method == StorageMethod.TS ? BlockHeader.NO_LIST : h.lists.listOf(endOfRun - first.addr), 0);
                h.fresh.put(first.addr, new Heap.FreshExtent(s, 0, merged.listId, 0));
                ByteBuffer b = ByteBuffer.allocate(BlockHeader.SIZE);
                BlockHeader.put(b, 0, h.code, merged.size, s, 0, merged.listId, false, 0, 0, h.grain);
                h.dev.write(merged.addr, b);
                result.add(merged);
            }
        });
        for (FreeBlock b : result) {
            h.lists.add(b);
        }
        h.coalesces++;
        if (diskLists) {
            h.syncDevice();
            h.markDurable();
            relink(h, h.method == StorageMethod.PL);
        }
        h.writeCheckpoint();
        h.syncDevice();
        h.markDurable();
    }

    /**
     * Log mode: the allocator's state in memory is the truth, and the log recovers it (a
     * checkpoint's snapshot, then the allocations and frees recorded since, replayed over free
     * extents by address, so that an allocation may span what were several free blocks in the
     * snapshot: {@link HeapReplay#claim}). So a merge is made in memory only, and writes nothing:
     * not a header (log-mode recovery reads none, and every allocation writes its block's whole
     * header), not the lists (log mode keeps none on disk), not a tail checkpoint. What must not
     * happen is what the direct path does first: rebuilding the lists from the headers on disk,
     * which in log mode still say allocated for every block freed since (its frees write nothing).
     */
    private static void mergeInMemory(Heap h) {
        forEachRun(h, (free, i, j, endOfRun) -> {
            FreeBlock first = free.get(i);
            if (j - i > 1 || endOfRun == h.tail) {
                // What was recorded of these extents no longer names a block: a reuse of the
                // merged block must write a header of its own (log mode writes whole headers).
                for (int k = i; k < j; k++) {
                    h.fresh.remove(free.get(k).addr);
                }
            }
            if (endOfRun == h.tail) {
                h.tail = first.addr;
            } else {
                long size = endOfRun - first.addr;
                FreeBlock b = j - i == 1 ? first
                        : new FreeBlock(first.addr, size, ++h.stamp,
                                h.method == StorageMethod.TS ? BlockHeader.NO_LIST : h.lists.listOf(size), 0);
                if (h.method == StorageMethod.PFL) {
                    h.diskLists.pflPush(b);
                }
                h.lists.add(b);
            }
        });
        h.coalesces++;
    }

    /** One run of adjacent free blocks: {@code free[from, to)}, ending at {@code end}. */
    @FunctionalInterface
    private interface RunVisitor {
        void visit(List<FreeBlock> free, int from, int to, long end);
    }

    /**
     * Takes every free block off the lists (and the PFL disk lists), in address order, and hands each
     * run of adjacent ones to {@code v}, which puts back what the merge leaves.
     */
    private static void forEachRun(Heap h, RunVisitor v) {
        List<FreeBlock> free = h.lists.all();
        free.sort(Comparator.comparingLong(b -> b.addr));
        h.lists.clear();
        h.diskLists.clearPfl();
        int i = 0;
        while (i < free.size()) {
            long endOfRun = free.get(i).addr + free.get(i).size;
            int j = i + 1;
            while (j < free.size() && free.get(j).addr == endOfRun) {
                endOfRun += free.get(j).size;
                j++;
            }
            v.visit(free, i, j, endOfRun);
            i = j;
        }
    }

    /**
     * PL and PFL: the free lists and the space counters from a scan of every header, which the
     * merge needs anyway to relink the disk lists. A crash open by the lists ends with such a
     * scan too ({@link HeapRecovery#rebuildFreeLists}), so the lists in memory are exact already;
     * the counters a free adjusts by an estimate of the bytes requested become exact again.
     */
    private static void reclaimByScan(Heap h) {
        h.lists.clear();
        h.diskLists.clearPfl();
        h.allocatedBytes = 0;
        h.requestedBytes = 0;
        h.allocatedCount = 0;
        HeaderScanner s = new HeaderScanner(h);
        s.repair = true;
        s.scan(h.start, h.tail, (addr, hd) -> {
            if (hd.allocated) {
                h.account(hd.size, hd.length);
            } else {
                h.lists.add(new FreeBlock(addr, hd.size, hd.stamp, hd.listId, hd.next));
            }
        });
        // A remainder the scan rebuilt gets its header now: a block reused whole later writes
        // only its status, and would otherwise be allocated with no valid header.
        for (Heap.Repair r : h.pendingRepairs) {
            h.dev.write(r.pos(), r.bytes());
        }
        h.pendingRepairs.clear();
    }

    /**
     * Makes the disk lists match the heap again after coalescing or recovery. PFL: every free
     * block is linked on the list of its size, in address order; only next pointers that change
     * are written. PL with {@code all}: every block, allocated or free, is rewritten onto the list
     * of its size (one header write each; this is what PL pays for its lists).
     */
    static void relink(Heap h, boolean all) {
        if (h.method == StorageMethod.PFL) {
            List<FreeBlock> free = h.lists.all();
            free.sort(Comparator.comparingLong((FreeBlock b) -> b.addr).reversed());
            h.diskLists.clearPfl();
            ByteBuffer nb = ByteBuffer.allocate(9);
            for (FreeBlock b : free) {
                long oldNext = b.next;
                int oldList = b.listId;
                b.listId = h.lists.listOf(b.size);
                h.diskLists.pflPush(b);
                if (b.next != oldNext || b.listId != oldList) {
                    if (b.listId != oldList) {
                        ByteBuffer hb = ByteBuffer.allocate(BlockHeader.SIZE);
                        BlockHeader.put(hb, 0, h.code, b.size, b.stamp, 0, b.listId, false, 0, b.next, h.grain);
                        h.dev.write(b.addr, hb);
                    } else {
                        nb.clear();
                        nb.putLong(0, b.next).put(8, BlockHeader.FREE);
                        h.dev.write(b.addr + BlockHeader.NEXT_OFFSET, nb);
                    }
                }
            }
        } else if (h.method == StorageMethod.PL && all) {
            relinkAllPl(h);
        }
        h.diskLists.headsDirty = true;
    }

    private static void relinkAllPl(Heap h) {
        List<long[]> blocks = new ArrayList<>();
        List<BlockHeader> headers = new ArrayList<>();
        new HeaderScanner(h).scan(h.start, h.tail, (addr, hd) -> {
            blocks.add(new long[] {addr});
            headers.add(hd);
        });
        Arrays.fill(h.diskLists.plHeads, 0);
        java.util.Map<Long, FreeBlock> freeByAddr = new java.util.HashMap<>();
        for (FreeBlock f : h.lists.all()) {
            freeByAddr.put(f.addr, f);
        }
        ByteBuffer hb = ByteBuffer.allocate(BlockHeader.SIZE);
        for (int k = 0; k < blocks.size(); k++) {
            long addr = blocks.get(k)[0];
            BlockHeader hd = headers.get(k);
            int list = h.lists.listOf(hd.size);
            long next = h.diskLists.plHeads[list];
            h.diskLists.plHeads[list] = addr;
            hb.clear();
            BlockHeader.put(hb, 0, h.code, hd.size, hd.stamp, hd.remainder, list, hd.allocated, hd.length, next, h.grain);
            h.dev.write(addr, hb);
            FreeBlock f = freeByAddr.get(addr);
            if (f != null) {
                f.listIdKnown(list, next);
            }
        }
    }
}
