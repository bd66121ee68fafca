package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
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
    /** The page cache's unit, which writeback writes whole: what a batch's reuse packs its blocks into. */
    static final int PAGE = 4096;
    /** Most blocks of a quick list a batch looks at to choose those it reuses. */
    static final int REUSE_SCAN = 1 << 16;
    /** Blocks a batch looks at for each it reuses, at most {@link #REUSE_SCAN} in all. */
    static final int REUSE_CHOICE = 16;

    private BatchAllocator() {}

    /**
     * The batch does not fit where it was placed: thrown while it is placed, before anything is
     * written, so that its undo has only memory to take back and the heap can make room and place
     * it again ({@link Heap#allocateBatch}). Never reaches a caller: a device's own full disk is a
     * {@link StoreFullException}, which does.
     */
    static final class NoRoom extends org.htod.core.HtodException {
        private static final long serialVersionUID = 1L;

        NoRoom(String message) {
            super(message);
        }

        StoreFullException full() {
            return new StoreFullException(getMessage(), true);
        }
    }

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

    /**
     * @param anyBlock every free block that can be split is a candidate, the tail last, as past
     *     the fragmentation threshold: for a batch the tail alone no longer holds
     */
    static long[] allocate(Heap h, List<ByteBuffer> payloads, boolean anyBlock) {
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
        long floor = anyBlock || Coalescer.overFragmented(h) ? sizes[order[n - 1]] : Math.max(h.opt.obaThreshold(), h.grain);
        TreeMap<Long, ArrayDeque<FreeBlock>> candidates = new TreeMap<>();
        for (FreeBlock b : h.lists.atLeast(floor)) {
            if (h.canSplit(b) && h.withinReach(b)) {
                candidates.computeIfAbsent(b.size, s -> new ArrayDeque<>()).add(b);
            }
        }
        TreeMap<Long, Piece> pieces = new TreeMap<>();
        List<FreeBlock> batchRemainders = new ArrayList<>();
        long tail = h.tail;
        long waste = h.opt.acceptableWaste();
        h.diskLists.deferredLinkWrites = new ArrayList<>();
        List<long[]> linkWrites;
        // The blocks of a size's quick list that this batch reuses, chosen when the first request
        // of that size finds no candidate (none will be found for the later ones: only a split
        // adds candidates), and already taken off the list.
        ArrayDeque<FreeBlock> reused = new ArrayDeque<>();
        long reusedSize = -1;
        try {
            for (int k = 0; k < n; k++) {
                int i = order[k];
                long s = sizes[i];
                FreeBlock b = poll(candidates, s);
                boolean taken = false;
                if (b == null) {
                    if (s >= floor) {
                        unused(reused, reusedSize); // its quick list's durable blocks were candidates, all taken now
                    } else if (h.method == StorageMethod.PFL && !h.logged()) {
                        reused = oldestOfQuickList(h, s); // one request at a time: see there
                    } else if (s != reusedSize) {
                        unused(reused, reusedSize);
                        reusedSize = s;
                        int alike = 1;
                        while (k + alike < n && sizes[order[k + alike]] == s) {
                            alike++;
                        }
                        reused = takeFromQuickList(h, s, alike);
                    }
                    b = reused.poll();
                    taken = b != null;
                }
                if (b == null) {
                    if (tail > h.reach() - s) {
                        throw new NoRoom("no room for a batch block of " + s + " bytes in the heap of "
                                + h.dev.name() + ": tail at " + tail + ", " + h.endNote());
                    }
                    FreeBlock nb = Placer.newFreeExtent(h, tail, s, ++h.stamp);
                    h.putFresh(tail, new Heap.FreshExtent(nb.stamp, 0, nb.listId, nb.next));
                    pieces.put(tail, new Piece(nb, i, 0));
                    tail += s;
                    continue;
                }
                BlockHeader read = null;
                if (taken) {
                    read = Placer.knowHeader(h, b);
                } else if (!batchRemainders.remove(b)) {
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
                    h.undo.readBefore(b.addr, read);
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
            unused(reused, reusedSize);
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
     * PMFLF's first step for a small request (§2.4.1), which OBA's threshold passes over: blocks
     * of the request's own quick list, each used whole (one write, as the tail costs). Without it
     * the flusher, which allocates only in batches, never reused the blocks its installs freed,
     * and a heap of steady replacements grew to three times what it held. Up to {@code count}
     * blocks of {@code size}, taken off the list, in address order; only blocks whose extent is
     * durable (freed before the last sync), as for every block a batch takes.
     *
     * <p>Which blocks: those on the {@linkplain #PAGE pages} holding most of them first. The
     * kernel writes a dirtied page back whole, so a batch costs the disk a page for each page it
     * touches, whatever it wrote there: reusing the list's oldest blocks, one here and one there
     * across the heap, wrote a page (4 KiB) for each entry of 512 bytes, and a flusher replacing
     * 200-byte values made the disk write about 3.9 KB a put where the syscalls wrote 1.1 KB.
     * The choice is among the list's oldest blocks, {@value #REUSE_CHOICE} for each the batch
     * takes and at most {@value #REUSE_SCAN}, so that a list of millions costs a batch no more:
     * on 2 cores, 64 writers of 200-byte values, the disk wrote 2.7 to 2.8 KB a put instead of
     * 3.4 to 4.0, and the flusher's processor time a put did not change beyond the noise.
     */
    private static ArrayDeque<FreeBlock> takeFromQuickList(Heap h, long size, int count) {
        ArrayDeque<FreeBlock> out = new ArrayDeque<>();
        int l = h.lists.listOf(size);
        if (!h.lists.isQuick(l)) {
            return out;
        }
        // the blocks looked at, oldest first; the durable ones as (address in grains) << 16 |
        // (index in seen), sorted: by address, so each page's blocks together (a heap's grains
        // number far below 2^47)
        int window = (int) Math.min(Math.min(REUSE_SCAN, h.lists.quickSize(l)), (long) REUSE_CHOICE * count);
        FreeBlock[] seen = new FreeBlock[window];
        long[] keys = new long[window];
        int n = 0;
        Iterator<FreeBlock> it = h.lists.oldestFirst(l);
        for (int looked = 0; looked < window; looked++) {
            FreeBlock b = it.next();
            seen[looked] = b;
            if (h.canSplit(b) && h.withinReach(b)) {
                keys[n++] = (b.addr / h.grain) << 16 | looked;
            }
        }
        if (n == 0) {
            return out;
        }
        Arrays.sort(keys, 0, n);
        // the pages' runs in keys, [runStart[r], runStart[r + 1]), and how many runs hold each count
        int[] runStart = new int[n + 1];
        int runs = 0;
        for (int i = 0; i < n; i++) {
            if (i == 0 || (keys[i] >>> 16) * h.grain / PAGE != (keys[i - 1] >>> 16) * h.grain / PAGE) {
                runStart[runs++] = i;
            }
        }
        runStart[runs] = n;
        int most = 0;
        for (int r = 0; r < runs; r++) {
            most = Math.max(most, runStart[r + 1] - runStart[r]);
        }
        // the runs by count, most first, each count's in address order (a counting sort)
        int[] from = new int[most + 2];
        for (int r = 0; r < runs; r++) {
            from[most - (runStart[r + 1] - runStart[r]) + 1]++;
        }
        for (int c = 1; c < from.length; c++) {
            from[c] += from[c - 1];
        }
        int[] byCount = new int[runs];
        for (int r = 0; r < runs; r++) {
            byCount[from[most - (runStart[r + 1] - runStart[r])]++] = r;
        }
        boolean[] take = new boolean[window]; // by place in seen
        int taken = 0;
        for (int k = 0; k < runs && taken < count; k++) {
            int r = byCount[k];
            for (int i = runStart[r]; i < runStart[r + 1] && taken < count; i++) {
                take[(int) (keys[i] & 0xFFFF)] = true;
                taken++;
            }
        }
        List<FreeBlock> blocks = new ArrayList<>(taken); // in address order, as keys are
        for (int i = 0; i < n; i++) {
            int at = (int) (keys[i] & 0xFFFF);
            if (take[at]) {
                blocks.add(seen[at]);
            }
        }
        h.takeFromQuickList(l, blocks, seen, take);
        out.addAll(blocks);
        return out;
    }

    /**
     * The list's oldest block alone, if durable, as a batch took before it chose by page: on the
     * PFL method in direct mode, whose recovery follows the free lists on disk. Taking a block
     * from inside the list can leave a predecessor that skipped the blocks freed since the last
     * sync pointing at it, allocated, until a clean close rewrites the pointer, and a crash
     * before then loses the rest of that list to recovery; the oldest block is rarely one so
     * skipped to.
     */
    private static ArrayDeque<FreeBlock> oldestOfQuickList(Heap h, long size) {
        ArrayDeque<FreeBlock> out = new ArrayDeque<>();
        int l = h.lists.listOf(size);
        if (h.lists.isQuick(l) && h.lists.quickSize(l) > 0) {
            FreeBlock b = h.lists.oldestFirst(l).next();
            if (h.canSplit(b) && h.withinReach(b)) {
                h.takeFromQuickList(l, List.of(b), new FreeBlock[] {b}, new boolean[] {true});
                out.add(b);
            }
        }
        return out;
    }

    /** Never: each request of a size that found no candidate takes one of the blocks taken for that size. */
    private static void unused(ArrayDeque<FreeBlock> reused, long size) {
        if (!reused.isEmpty()) {
            throw new IllegalStateException(reused.size() + " blocks of " + size + " bytes taken for a batch and not used");
        }
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
