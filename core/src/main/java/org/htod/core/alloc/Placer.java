package org.htod.core.alloc;

import java.nio.ByteBuffer;
import org.htod.core.CorruptStoreException;
import org.htod.core.alloc.Heap.FreshExtent;
import org.htod.core.container.StorageMethod;

/**
 * Where one block goes, and the write that puts it there: PMFLF's choice (core paper §2.4.1) of a
 * free block used whole, a free block split, or the tail; the one device write that places the
 * block with its header (and, for a split, the free remainder's header); and the extents such a
 * write defines, which OBA ({@link BatchAllocator}) makes as well.
 *
 * <p>Static methods over the {@link Heap} whose state they change, called with the heap's lock
 * held, as {@link BatchAllocator}'s and {@link Coalescer}'s are: the heap keeps its state, its
 * lock and the rules of its crash safety; this is the placing of blocks that it runs under them.
 */
final class Placer {
    private Placer() {}

    /** The kinds of placement PMFLF makes; see {@link #place}. */
    enum Kind { WHOLE, SPLIT, TAIL }

    record Placement(Kind kind, FreeBlock block, long addr, long size) {}

    /** PMFLF's allocation strategy (§2.4.1) for a block of {@code size} bytes, or null. */
    static Placement place(Heap heap, long size) {
        int list = heap.lists.listOf(size);
        long waste = heap.opt.acceptableWaste();
        if (heap.lists.isQuick(list)) {
            FreeBlock b = heap.lists.smallestAtLeast(list, size, heap::withinReach);
            if (b != null) {
                return new Placement(Kind.WHOLE, b, b.addr, b.size);
            }
            // Beyond the paper: a block of a larger quick list, used whole within the acceptable
            // waste, costs the same one write as the tail and does not grow the heap.
            for (int l = list + 1; l < heap.lists.listCount() && heap.lists.isQuick(l) && (long) (l + 1) * heap.grain <= size + waste; l++) {
                b = heap.lists.smallestAtLeast(l, size, heap::withinReach);
                if (b != null) {
                    return new Placement(Kind.WHOLE, b, b.addr, b.size);
                }
            }
            return tailOrLarger(heap, list + 1, size, waste);
        }
        Placement p = searchList(heap, list, size, waste);
        return p != null ? p : tailOrLarger(heap, list + 1, size, waste);
    }

    /**
     * For a block that replaces another of the same key again and again (a placed value, given
     * back when its key changes): the free lists before the tail, whole or split, so that the heap
     * grows by what is held, not by what is written; the tail only when no free block serves.
     */
    static Placement placeReusing(Heap heap, long size) {
        Placement p = searchFrom(heap, heap.lists.listOf(size), size, heap.opt.acceptableWaste());
        if (p != null) {
            return p;
        }
        return heap.tailFits(size) ? new Placement(Kind.TAIL, null, heap.tail, size) : null;
    }

    /** Whether some free block has at least {@code size} bytes, whether or not it may be split now. */
    static boolean anyFreeAtLeast(Heap heap, long size) {
        for (int l = heap.lists.listOf(size); l < heap.lists.listCount(); l++) {
            if (heap.lists.smallestAtLeast(l, size, heap::withinReach) != null) {
                return true;
            }
        }
        return false;
    }

    /** The paper's order: the tail before larger lists, because splitting costs disk accesses. */
    private static Placement tailOrLarger(Heap heap, int fromList, long size, long waste) {
        if (heap.tailFits(size)) {
            return new Placement(Kind.TAIL, null, heap.tail, size);
        }
        return searchFrom(heap, fromList, size, waste);
    }

    private static Placement searchFrom(Heap heap, int fromList, long size, long waste) {
        for (int l = fromList; l < heap.lists.listCount(); l++) {
            Placement p = searchList(heap, l, size, waste);
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    /** Smallest usable block of list {@code l}: whole if it wastes at most {@code w}, else split. */
    private static Placement searchList(Heap heap, int l, long size, long waste) {
        FreeBlock b = heap.lists.smallestAtLeast(l, size, c -> heap.withinReach(c) && (c.size <= size + waste || heap.canSplit(c)));
        if (b == null) {
            return null;
        }
        return b.size <= size + waste ? new Placement(Kind.WHOLE, b, b.addr, b.size)
                : new Placement(Kind.SPLIT, b, b.addr, size);
    }

    static long write(Heap heap, Placement p, ByteBuffer payload) {
        int len = payload.remaining();
        switch (p.kind) {
            case WHOLE: {
                FreeBlock b = p.block;
                heap.takeFromLists(b);
                FreshExtent f = heap.fresh.get(b.addr);
                if (f == null && heap.logged()) {
                    f = new FreshExtent(b.stamp, 0, b.listId < 0 ? BlockHeader.NO_LIST : b.listId, b.next);
                }
                if (f == null) {
                    ByteBuffer buf = ByteBuffer.allocate(8 + len);
                    BlockHeader.putStatus(buf, 0, true, len);
                    buf.position(8);
                    buf.put(payload.duplicate());
                    buf.flip();
                    heap.dev.write(b.addr + BlockHeader.STATUS_OFFSET, buf);
                } else {
                    ByteBuffer buf = ByteBuffer.allocate(BlockHeader.SIZE + len);
                    BlockHeader.put(buf, 0, heap.code, b.size, f.stamp(), f.remainder(),
                            heap.method == StorageMethod.PFL ? b.listId : f.listId(),
                            true, len, heap.method == StorageMethod.PFL ? b.next : f.next(), heap.grain);
                    buf.position(BlockHeader.SIZE);
                    buf.put(payload.duplicate());
                    buf.flip();
                    heap.dev.write(b.addr, buf);
                }
                return heap.handle(b.addr, b.size);
            }
            case SPLIT: {
                FreeBlock b = p.block;
                heap.takeFromLists(b);
                heap.undo.readBefore(b.addr, knowHeader(heap, b));
                long rem = b.size - p.size;
                long s = ++heap.stamp;
                int listId = listIdForSplitPart(heap, b, p.size);
                long next = heap.method == StorageMethod.TS ? 0 : b.next;
                heap.putFresh(p.addr, new FreshExtent(s, rem, listId, next));
                ByteBuffer buf = ByteBuffer.allocate((int) p.size + BlockHeader.SIZE);
                BlockHeader.put(buf, 0, heap.code, p.size, s, rem, listId, true, len, next, heap.grain);
                buf.position(BlockHeader.SIZE);
                buf.put(payload.duplicate());
                FreeBlock r = newFreeExtent(heap, b.addr + p.size, rem, s);
                putHeaderOf(heap, buf, (int) p.size, r, false, 0);
                heap.putFresh(r.addr, new FreshExtent(s, 0, r.listId, r.next));
                buf.clear();
                heap.dev.write(p.addr, buf);
                heap.lists.add(r);
                return heap.handle(p.addr, p.size);
            }
            case TAIL: {
                long s = ++heap.stamp;
                ByteBuffer buf = ByteBuffer.allocate((int) p.size);
                FreeBlock nb = newFreeExtent(heap, heap.tail, p.size, s);
                heap.putFresh(p.addr, new FreshExtent(s, 0, nb.listId, nb.next));
                putHeaderOf(heap, buf, 0, nb, true, len);
                buf.position(BlockHeader.SIZE);
                buf.put(payload.duplicate());
                buf.clear();
                heap.dev.write(p.addr, buf);
                heap.advanceTail(p.size);
                return heap.handle(p.addr, p.size);
            }
            default:
                throw new AssertionError(p.kind);
        }
    }

    /**
     * A new extent (a split remainder or a tail block) with its list id and next pointer set as the
     * storage method wants them. For PL the block is pushed on its disk list; for PFL a free one is
     * pushed on its free list by the caller through {@link Heap#lists}.
     */
    static FreeBlock newFreeExtent(Heap heap, long addr, long size, long s) {
        switch (heap.method) {
            case PL: {
                int c = heap.lists.listOf(size);
                return new FreeBlock(addr, size, s, c, heap.diskLists.plPush(c, addr));
            }
            case PFL:
                return new FreeBlock(addr, size, s, heap.lists.listOf(size), 0);
            default:
                return new FreeBlock(addr, size, s, BlockHeader.NO_LIST, 0);
        }
    }

    /** Header of extent {@code b} into {@code buf} at {@code at}; a free PFL block is pushed on its list first. */
    static void putHeaderOf(Heap heap, ByteBuffer buf, int at, FreeBlock b, boolean allocated, int len) {
        if (!allocated && heap.method == StorageMethod.PFL) {
            heap.diskLists.pflPush(b);
        }
        BlockHeader.put(buf, at, heap.code, b.size, b.stamp, 0, b.listId, allocated, len, b.next, heap.grain);
    }

    /** PL keeps a split block on the disk list it was created on; PFL files it by its new size. */
    static int listIdForSplitPart(Heap heap, FreeBlock b, long newSize) {
        switch (heap.method) {
            case PL:
                return b.listId;
            case PFL:
                return heap.lists.listOf(newSize);
            default:
                return BlockHeader.NO_LIST;
        }
    }

    /**
     * PL splits rewrite the whole header, so they need the block's list id and next pointer.
     * Returns the header it read, or null when it read none.
     */
    static BlockHeader knowHeader(Heap heap, FreeBlock b) {
        if (heap.method != StorageMethod.PL || b.listId >= 0) {
            return null;
        }
        if (heap.logged()) {
            // The header on disk may be stale after the log's recovery; log mode keeps no disk lists.
            b.listIdKnown(heap.lists.listOf(b.size), 0);
            return null;
        }
        BlockHeader h = heap.headerAt(b.addr);
        if (h == null || h.size != b.size) {
            throw new CorruptStoreException("expected a free block header of size " + b.size + " at offset " + b.addr
                    + " in " + heap.dev.name() + ", found " + (h == null ? "an invalid header" : "size " + h.size), b.addr);
        }
        b.listIdKnown(h.listId, h.next);
        return h;
    }

    /**
     * The creation stamp and remainder note that free block {@code b}'s extent has on disk,
     * {stamp, remainder}, or null where a new header may be written (log mode, whose recovery
     * reads no headers, or no valid header of that size there). {@code read}: its header if the
     * caller has just read it ({@link #knowHeader}), else null. The caller holds the lock.
     */
    static long[] extentIdentity(Heap heap, FreeBlock b, BlockHeader read) {
        if (heap.logged()) {
            return null;
        }
        FreshExtent f = heap.fresh.get(b.addr);
        if (f != null) {
            return new long[] {f.stamp(), f.remainder()};
        }
        BlockHeader h = read != null ? read : heap.headerAt(b.addr);
        return h == null || h.size != b.size ? null : new long[] {h.stamp, h.remainder};
    }
}
