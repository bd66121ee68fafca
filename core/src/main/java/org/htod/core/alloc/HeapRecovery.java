package org.htod.core.alloc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.htod.core.CorruptStoreException;
import org.htod.core.StepListener;
import org.htod.core.container.StorageMethod;

/**
 * Rebuilds a heap's in-memory state on open: from the clean-shutdown snapshot when there is one,
 * otherwise by the storage method's own recovery.
 *
 * <ul>
 *   <li>TS: scan every header from the first block to the tail checkpoint, then walk past it
 *       (paper §2.1, Fig. 7).
 *   <li>PL: follow the disk lists from their checkpointed heads; every block on them is free or
 *       allocated (§2.2). They lack the blocks created below the tail since the durable
 *       checkpoint (a split's remainder is pushed on a head that checkpoint does not name), and
 *       every block below its tail when the checkpoint is one a coalescing wrote with empty lists.
 *   <li>PFL: follow the disk free lists (§2.3), each up to the first block on it that is
 *       allocated or defined after the checkpoint, whose next pointer cannot be trusted (see
 *       {@code docs/FORMAT.md}, "Recovery, per storage method"). Those lists lack the blocks
 *       freed after the checkpoint and those behind such a block.
 * </ul>
 *
 * Either way the lists only begin the recovery (they find the checkpoint's lists consistent, and
 * the walk finds the tail): before the open finishes, the free lists are replaced by the free
 * blocks of one scan of every header ({@link FreeScan}), the layers above's sweep of the
 * allocated blocks if it ran meanwhile, else one of its own.
 *
 * PL and PFL fall back to the TS scan when a list is inconsistent (an invalid header, a block in
 * two places); the report says so and why.
 */
final class HeapRecovery {
    /** Stamps jump by this after a crash, past any stamp a lost write might have left on disk. */
    static final long STAMP_GAP = 1L << 32;

    private HeapRecovery() {}

    static void run(Heap h, Heap.SnapshotRef snapshot, StepListener progress) {
        long t0 = System.nanoTime();
        String fallback = null;
        Checkpoint cp = Checkpoint.read(h.dev, h.opt.heapOffset());
        if (cp == null) {
            throw new CorruptStoreException("no valid heap checkpoint in " + h.dev.name() + ": expected magic HTODCKPT and a"
                    + " matching CRC32C at offset " + h.opt.heapOffset() + " or " + (h.opt.heapOffset() + Checkpoint.COPY_SIZE),
                    h.opt.heapOffset());
        }
        h.checkpointSeq = cp.sequence + 1;
        h.writtenCheckpointStamp = cp.stamp;
        h.durableCheckpointStamp = cp.stamp;
        // After a process's death the checkpoint read may be in the page cache only: the next one
        // written is preceded by a sync, or it would overwrite the copy holding the last durable
        // one (see Heap.writeCheckpoint). A clean close synced it.
        h.checkpointUnsynced = snapshot == null;
        if (snapshot != null) {
            try {
                Snapshot.read(h, snapshot);
                // The tail checkpoint on disk may predate the last frees before the close: the
                // first sync writes one with the heads memory holds, or a crash after it left
                // those blocks on no list that recovery follows.
                h.diskLists.headsDirty = h.method != StorageMethod.TS;
                h.report = new HeapRecoveryReport("snapshot", Duration.ofNanos(System.nanoTime() - t0), 0, snapshot.length(),
                        h.lists.freeCount(), 0, 0, 0, null);
                return;
            } catch (CorruptStoreException e) {
                fallback = "the snapshot was unreadable: " + e.getMessage();
                reset(h);
            }
        }
        Result r = null;
        if (h.method != StorageMethod.TS) {
            try {
                r = lists(h, cp, progress);
            } catch (ListsInconsistent e) {
                fallback = e.getMessage();
                reset(h);
            }
        }
        if (r == null) {
            r = scan(h, cp, progress);
        }
        h.stamp = Math.max(h.stamp, cp.stamp) + STAMP_GAP;
        h.markDurable();
        h.highWater = Math.max(h.highWater, h.tail);
        // The writes recovery owes (rebuilt headers, relinked lists, a checkpoint) wait for
        // Heap.finishOpen: the layers above check their structures first, and an open that fails
        // leaves the device as it found it.
        h.relinkAllOnFinish = r.path.equals("scan");
        // The lists lack free blocks (PL: those created by splits since the checkpoint; PFL: those
        // freed since it, and a list cut at a head taken since), and reach only some headers, so
        // the remainder rule was applied to only some blocks: the free blocks of a scan of every
        // header, which applies it everywhere, replace them before the open finishes.
        h.rebuildFreeByScan = r.path.equals("lists");
        h.recoveryWritesPending = true;
        h.report = new HeapRecoveryReport(r.path, Duration.ofNanos(System.nanoTime() - t0), r.headersRead, r.bytesRead,
                h.lists.freeCount(), r.skipped, r.repaired, r.tailBlocks, fallback);
    }

    private record Result(String path, long headersRead, long bytesRead, long skipped, long repaired, long tailBlocks) {}

    private static final class ListsInconsistent extends Exception {
        private static final long serialVersionUID = 1L;

        ListsInconsistent(String message) {
            super(message, null, false, false);
        }
    }

    private static void reset(Heap h) {
        h.lists.clear();
        h.diskLists.clear();
        h.tail = h.start;
        h.stamp = 0;
        h.allocatedBytes = 0;
        h.requestedBytes = 0;
        h.allocatedCount = 0;
    }

    /** TS recovery, and the fallback of the other two: every header, then the walk past the tail checkpoint. */
    private static Result scan(Heap h, Checkpoint cp, StepListener progress) {
        HeaderScanner s = new HeaderScanner(h);
        s.progress = progress;
        s.repair = true;
        long[] maxStamp = {0};
        HeaderScanner.Visitor v = (addr, hd) -> {
            maxStamp[0] = Math.max(maxStamp[0], hd.stamp);
            if (hd.allocated) {
                h.account(hd.size, hd.length);
            } else {
                h.lists.add(new FreeBlock(addr, hd.size, hd.stamp, hd.listId, hd.next));
            }
        };
        long cpTail = Math.max(h.start, Math.min(cp.tail, h.end));
        long scanned = s.scanToCheckpoint(h.start, cpTail, v);
        long before = s.headersRead;
        h.tail = s.walkTail(scanned, cp.stamp, v);
        h.stamp = maxStamp[0];
        return new Result("scan", s.headersRead, s.bytesRead, 0, s.repaired, s.headersRead - before);
    }

    /** PL/PFL recovery from the disk lists, then the walk past the tail checkpoint. */
    private static Result lists(Heap h, Checkpoint cp, StepListener progress) throws ListsInconsistent {
        if (cp.heads.length != h.lists.listCount()) {
            throw new ListsInconsistent("the checkpoint holds " + cp.heads.length + " list heads, expected "
                    + h.lists.listCount());
        }
        HeaderScanner s = new HeaderScanner(h);
        // The walk past the tail may rebuild a remainder whose header a torn split lost; the
        // header must then be written, or the block would be handed out with none on disk.
        s.repair = true;
        s.progress = progress;
        Set<Long> seen = new HashSet<>();
        List<FreeBlock> found = new ArrayList<>();
        long skipped = 0;
        long maxStamp = 0;
        long allocatedOnLists = 0;
        for (int list = 0; list < cp.heads.length; list++) {
            long pos = cp.heads[list];
            while (pos != 0 && seen.add(pos)) {
                if (pos < h.start || pos >= cp.tail || pos % h.grain != 0) {
                    throw new ListsInconsistent("list " + list + " points to offset " + pos + ", outside the blocks ["
                            + h.start + ", " + cp.tail + ")");
                }
                if ((++s.headersRead & (StepListener.EVERY - 1)) == 0) {
                    progress.step(s.headersRead, -1);
                }
                s.bytesRead += BlockHeader.SIZE;
                BlockHeader hd = h.headerAt(pos);
                if (hd == null) {
                    throw new ListsInconsistent("list " + list + " reaches offset " + pos + ", where no valid header is");
                }
                if (h.method == StorageMethod.PL && hd.listId != list) {
                    throw new ListsInconsistent("block at " + pos + " on disk list " + list + " says it belongs to list "
                            + hd.listId);
                }
                maxStamp = Math.max(maxStamp, hd.stamp);
                if (h.method == StorageMethod.PFL && (hd.allocated || hd.stamp > cp.stamp)) {
                    // A PFL disk list is followed only through free blocks defined before the
                    // checkpoint (durable, since a checkpoint is written right after a sync).
                    // A block defined since may be a piece of a split whose write was lost, its
                    // header valid but inside an older extent that still stands; and an
                    // allocated block's next pointer is the list as it was when the block was
                    // taken, which nothing rewrites since: a coalescing relinks free blocks only,
                    // so it may name a header a merge has swallowed, stale but valid. Either way
                    // the rest of the list is left to the scan that rebuilds the free lists.
                    if (hd.allocated) {
                        skipped++;
                        allocatedOnLists += hd.size;
                    }
                    break;
                }
                if (hd.allocated) {
                    skipped++;
                    allocatedOnLists += hd.size;
                    if (h.method == StorageMethod.PL) {
                        h.account(hd.size, hd.length);
                    }
                } else {
                    found.add(new FreeBlock(pos, hd.size, hd.stamp, hd.listId, hd.next));
                }
                pos = hd.next;
            }
            if (h.method == StorageMethod.PL) {
                h.diskLists.plHeads[list] = cp.heads[list];
            }
        }
        long[] walkStamp = {maxStamp};
        long[] walked = {0};
        long cpTail = Math.max(h.start, Math.min(cp.tail, h.end));
        h.tail = s.walkTail(cpTail, cp.stamp, (addr, hd) -> {
            walked[0]++;
            walkStamp[0] = Math.max(walkStamp[0], hd.stamp);
            if (hd.allocated) {
                h.account(hd.size, hd.length);
            } else if (seen.add(addr)) {
                found.add(new FreeBlock(addr, hd.size, hd.stamp, hd.listId, hd.next));
            }
        });
        found.sort(Comparator.comparingLong(b -> b.addr));
        long prevEnd = h.start;
        for (FreeBlock b : found) {
            if (b.addr < prevEnd || b.addr + b.size > h.tail) {
                throw new ListsInconsistent("free block at " + b.addr + " of " + b.size + " bytes overlaps another block"
                        + " or the tail at " + h.tail);
            }
            prevEnd = b.addr + b.size;
            h.lists.add(b);
        }
        if (h.method == StorageMethod.PFL) {
            // Only the free blocks are known; whatever is not free below the tail counts as allocated.
            h.allocatedBytes = h.tail - h.start - h.lists.freeBytes();
            h.requestedBytes = h.allocatedBytes;
            h.allocatedCount = 0;
        }
        h.stamp = walkStamp[0];
        return new Result("lists", s.headersRead, s.bytesRead, skipped, s.repaired, walked[0]);
    }

    /**
     * PL and PFL, after a recovery by their lists: the blocks of one complete scan of the headers
     * from the first block to the tail, in the scan's own tiling (each block's size leads to the next
     * header, and the remainder rule applies, as for TS). Its free blocks replace the lists' ({@link
     * #rebuildFreeLists}): a header that this scan meets and that says free proves the block free as
     * of the crash, exactly as TS's recovery trusts it, since a free is written only once no durable
     * structure names the block, and an allocation is named durably only after a sync has made its
     * write durable. PL marks a free and an allocation in its headers as TS does (the status word;
     * a header of its own for an extent defined since the last sync), its list fields aside, which
     * the scan does not read. The lists could not say as much: PL's lack the remainders of splits
     * since the checkpoint, pushed on heads it does not name; PFL's were cut at a head taken since
     * the checkpoint and lack the blocks freed since. A header the scan does not meet (one a merge
     * swallowed, a piece of a split whose write was lost) is never believed, which is what stopped
     * PFL's lists at such blocks. The remainders it rebuilds are kept apart and written by {@link
     * Heap#finishOpen}.
     */
    static final class FreeScan implements HeaderScanner.Visitor {
        final HeaderScanner scanner;
        /** The tail the scan ended at. */
        final long tail;
        final List<FreeBlock> free = new ArrayList<>();
        final List<Heap.Repair> repairs = new ArrayList<>();
        long allocatedBytes;
        long requestedBytes;
        long allocatedCount;

        FreeScan(HeaderScanner scanner, long tail) {
            this.scanner = scanner;
            this.tail = tail;
            scanner.repair = true;
            scanner.repairs = repairs;
        }

        @Override
        public void visit(long addr, BlockHeader hd) {
            if (hd.allocated) {
                allocatedBytes += hd.size;
                requestedBytes += BlockHeader.SIZE + hd.length;
                allocatedCount++;
            } else {
                free.add(new FreeBlock(addr, hd.size, hd.stamp, hd.listId, hd.next));
            }
        }
    }

    /**
     * A complete scan made while the open is pending (by {@link Heap#forEachAllocated}, the layers
     * above's sweep of the allocated blocks): kept for {@link #rebuildFreeLists}, which then reads
     * nothing. Nothing changes the heap while its open is pending, so the scan still holds then.
     */
    static void offer(Heap h, FreeScan f) {
        h.lock.lock();
        try {
            if (h.rebuildFreeByScan && h.recoveryWritesPending && h.tail == f.tail) {
                h.scannedFree = f;
            }
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * PL and PFL, as the open finishes after a recovery by their lists: the free lists are those of
     * a scan of every header ({@link FreeScan}), the one {@link #offer}ed if any, else one made now;
     * the counters are exact, and every remainder note is checked (the scan applied the remainder
     * rule everywhere, and its repairs are written before anything else). The caller holds the lock
     * and relinks the disk lists next: PFL's from these free blocks; PL's heads stay those of the
     * checkpoint, and a block the scan found that no list reaches stays off them on disk (each
     * block's list link is fixed when it is created), for the next crash's open to find by its scan.
     */
    static void rebuildFreeLists(Heap h) {
        long t0 = System.nanoTime();
        FreeScan f = h.scannedFree;
        long headers = 0;
        long bytes = 0;
        if (f == null || f.tail != h.tail) {
            HeaderScanner s = new HeaderScanner(h);
            f = new FreeScan(s, h.tail);
            s.scan(h.start, h.tail, f);
            headers = s.headersRead;
            bytes = s.bytesRead;
        }
        h.lists.clear();
        h.diskLists.clearPfl(); // PL's heads are the checkpoint's, which the lists followed
        for (FreeBlock b : f.free) {
            h.lists.add(b);
        }
        h.allocatedBytes = f.allocatedBytes;
        h.requestedBytes = f.requestedBytes;
        h.allocatedCount = f.allocatedCount;
        h.pendingRepairs.clear(); // those of the walk past the tail are among the scan's
        h.pendingRepairs.addAll(f.repairs);
        h.rebuildFreeByScan = false;
        h.scannedFree = null;
        HeapRecoveryReport r = h.report;
        h.report = new HeapRecoveryReport(r.path(), r.took().plusNanos(System.nanoTime() - t0), r.headersRead() + headers,
                r.bytesRead() + bytes, h.lists.freeCount(), r.allocatedBlocksSkippedOnFreeLists(),
                Math.max(r.headersRepaired(), f.scanner.repaired), r.tailBlocksRecovered(), r.fallbackReason());
    }
}
