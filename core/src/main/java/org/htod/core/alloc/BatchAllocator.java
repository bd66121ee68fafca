package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;

/**
 * Optimized batch allocation (paper §2.5, Fig. 8). Requests are placed largest first, each into
 * the best-fitting free block of at least {@code T} bytes (splitting it, the remainder going back
 * to the candidates), or else contiguously from the tail; then all blocks are written in
 * ascending address order, every run of adjacent blocks in one device write.
 *
 * <p>Only free blocks whose extent is durable are candidates, so every header this batch writes
 * is a full one with a new stamp; a remainder split off in this batch may be split again, since
 * the two pieces are adjacent and so end up in the same write.
 */
final class BatchAllocator {
    private BatchAllocator() {}

    /** One block the batch will write: an allocated block, or the header of a free remainder. */
    private static final class Piece {
        final FreeBlock extent;
        final int request;
        final long remainder;

        Piece(FreeBlock extent, int request, long remainder) {
            this.extent = extent;
            this.request = request;
            this.remainder = remainder;
        }

        long bytes() {
            return request >= 0 ? extent.size : BlockHeader.SIZE;
        }
    }

    static long[] allocate(Heap h, List<ByteBuffer> payloads) {
        int n = payloads.size();
        if (n == 0) {
            return new long[0];
        }
        long[] sizes = new long[n];
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            sizes[i] = h.blockSizeFor(payloads.get(i).remaining());
            order[i] = i;
        }
        java.util.Arrays.sort(order, Comparator.comparingLong((Integer i) -> sizes[i]).reversed());

        // Past the fragmentation threshold the tail comes last: every free block that can be
        // split is a candidate, not only those of T bytes and more.
        long floor = Coalescer.overFragmented(h) ? sizes[order[n - 1]] : Math.max(h.opt.obaThreshold(), h.grain);
        TreeMap<Long, ArrayDeque<FreeBlock>> candidates = new TreeMap<>();
        for (FreeBlock b : h.lists.atLeast(floor)) {
            if (h.canSplit(b)) {
                candidates.computeIfAbsent(b.size, s -> new ArrayDeque<>()).add(b);
            }
        }
        TreeMap<Long, Piece> pieces = new TreeMap<>();
        List<FreeBlock> batchRemainders = new ArrayList<>();
        long tail = h.tail;
        long waste = h.opt.acceptableWaste();
        h.diskLists.deferredLinkWrites = new ArrayList<>();
        List<long[]> linkWrites;
        try {
            for (int i : order) {
                long s = sizes[i];
                FreeBlock b = poll(candidates, s);
                if (b == null) {
                    b = wholeFromQuickList(h, s);
                }
                if (b == null) {
                    if (tail > h.end - s) {
                        throw new StoreFullException("no room for a batch block of " + s + " bytes in the heap of "
                                + h.dev.name() + ": tail at " + tail + ", heap ends at " + h.end);
                    }
                    FreeBlock nb = Placer.newFreeExtent(h, tail, s, ++h.stamp);
                    h.putFresh(tail, new Heap.FreshExtent(nb.stamp, 0, nb.listId, nb.next));
                    pieces.put(tail, new Piece(nb, i, 0));
                    tail += s;
                    continue;
                }
                BlockHeader read = null;
                if (!batchRemainders.remove(b)) {
                    h.takeFromLists(b);
                    read = Placer.knowHeader(h, b);
                }
                long stamp = ++h.stamp;
                long next = h.method == StorageMethod.TS ? 0 : b.next;
                // A block below T (a candidate only past the fragmentation threshold) is split
                // down to the request: used whole within the waste, it left most of itself unused.
                if (b.size - s <= (b.size < h.opt.obaThreshold() ? 0 : waste)) {
                    int listId = Placer.listIdForSplitPart(h, b, b.size);
                    // Reused whole, the block keeps its extent's stamp and remainder note, as a
                    // single allocation keeps its header: the note may be all that lets a walk
                    // cross the remainder behind it, whose header a torn split lost.
                    long[] own = Placer.extentIdentity(h, b, read);
                    long st = own != null ? own[0] : stamp;
                    long rem = own != null ? own[1] : 0;
                    pieces.put(b.addr, new Piece(new FreeBlock(b.addr, b.size, st, listId, next), i, rem));
                    h.putFresh(b.addr, new Heap.FreshExtent(st, rem, listId, next));
                } else {
                    Placer.checkNoteBeforeSplit(h, b, read);
                    int listId = Placer.listIdForSplitPart(h, b, s);
                    pieces.put(b.addr, new Piece(new FreeBlock(b.addr, s, stamp, listId, next), i, b.size - s));
                    h.putFresh(b.addr, new Heap.FreshExtent(stamp, b.size - s, listId, next));
                    FreeBlock rest = Placer.newFreeExtent(h, b.addr + s, b.size - s, stamp);
                    h.putFresh(rest.addr, new Heap.FreshExtent(stamp, 0, rest.listId, rest.next));
                    pieces.put(rest.addr, new Piece(rest, -1, 0));
                    batchRemainders.add(rest);
                    if (rest.size >= floor) {
                        candidates.computeIfAbsent(rest.size, x -> new ArrayDeque<>()).add(rest);
                    }
                }
            }
        } finally {
            linkWrites = h.diskLists.deferredLinkWrites;
            h.diskLists.deferredLinkWrites = null;
        }
        long[] handles = new long[n];
        writeInAddressOrder(h, pieces, linkWrites, payloads, handles);
        for (FreeBlock r : batchRemainders) {
            h.lists.add(r);
        }
        for (int i = 0; i < n; i++) {
            h.account(h.blockSize(handles[i]), payloads.get(i).remaining());
        }
        if (tail > h.tail) {
            h.advanceTail(tail - h.tail);
        }
        return handles;
    }

    /**
     * PMFLF's first step for a small request (§2.4.1), which OBA's threshold passes over: a block
     * of the request's own quick list, used whole (one write, as the tail costs). Without it the
     * flusher, which allocates only in batches, never reused the blocks its installs freed, and a
     * heap of steady replacements grew to three times what it held. The list's oldest block, and
     * only once its extent is durable (freed before the last sync), as for every block a batch
     * takes; a quick list is LIFO, so the oldest is its last. Null if none.
     */
    private static FreeBlock wholeFromQuickList(Heap h, long size) {
        int l = h.lists.listOf(size);
        if (!h.lists.isQuick(l)) {
            return null;
        }
        FreeBlock b = h.lists.oldest(l);
        return b != null && h.canSplit(b) ? b : null;
    }

    private static FreeBlock poll(TreeMap<Long, ArrayDeque<FreeBlock>> candidates, long size) {
        Map.Entry<Long, ArrayDeque<FreeBlock>> e = candidates.ceilingEntry(size);
        if (e == null) {
            return null;
        }
        FreeBlock b = e.getValue().poll();
        if (e.getValue().isEmpty()) {
            candidates.remove(e.getKey());
        }
        return b;
    }

    /**
     * Writes the pieces in address order, each run of adjacent pieces as one device write, with
     * the PFL predecessor links that taking blocks off their free lists changed, in the same
     * order. A link inside a block the batch rewrites whole is already in that block's header.
     */
    private static void writeInAddressOrder(Heap h, TreeMap<Long, Piece> pieces, List<long[]> linkWrites,
            List<ByteBuffer> payloads, long[] handles) {
        TreeMap<Long, Long> links = new TreeMap<>();
        for (long[] w : linkWrites) {
            links.put(w[0], w[1]);
        }
        List<Piece> run = new ArrayList<>();
        long runEnd = -1;
        for (Piece p : pieces.values()) {
            if (!run.isEmpty() && p.extent.addr != runEnd) {
                flushLinksBelow(h, links, run.get(0).extent.addr);
                writeRun(h, run, payloads, handles);
                links.subMap(run.get(0).extent.addr, runEnd).clear();
                run.clear();
            }
            run.add(p);
            runEnd = p.extent.addr + p.bytes();
        }
        if (!run.isEmpty()) {
            flushLinksBelow(h, links, run.get(0).extent.addr);
            writeRun(h, run, payloads, handles);
            links.subMap(run.get(0).extent.addr, runEnd).clear();
        }
        flushLinksBelow(h, links, Long.MAX_VALUE);
    }

    private static void flushLinksBelow(Heap h, TreeMap<Long, Long> links, long limit) {
        for (Map.Entry<Long, Long> e : links.headMap(limit).entrySet()) {
            h.dev.write(e.getKey(), ByteBuffer.allocate(8).putLong(0, e.getValue()));
        }
        links.headMap(limit).clear();
    }

    private static void writeRun(Heap h, List<Piece> run, List<ByteBuffer> payloads, long[] handles) {
        long from = run.get(0).extent.addr;
        Piece last = run.get(run.size() - 1);
        ByteBuffer buf = ByteBuffer.allocate(Math.toIntExact(last.extent.addr + last.bytes() - from));
        for (Piece p : run) {
            int at = (int) (p.extent.addr - from);
            FreeBlock e = p.extent;
            if (p.request >= 0) {
                ByteBuffer payload = payloads.get(p.request);
                BlockHeader.put(buf, at, h.code, e.size, e.stamp, p.remainder, e.listId, true, payload.remaining(), e.next,
                        h.grain);
                buf.put(at + BlockHeader.SIZE, payload, payload.position(), payload.remaining());
                handles[p.request] = h.handle(e.addr, e.size);
            } else {
                Placer.putHeaderOf(h, buf, at, e, false, 0);
            }
        }
        h.dev.write(from, buf);
    }
}
