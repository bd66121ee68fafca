package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.List;
import org.htod.core.container.StorageMethod;

/**
 * The storage method's disk lists as the heap keeps them in memory. PL (core paper §2.2): the
 * head of each list (the paper's MLH); a block's own link is fixed when it is created. PFL
 * (§2.3): each free list with every block's neighbours ({@link FreeBlock#listPrev}, {@link
 * FreeBlock#listNext}), so that taking a block from the middle of a list costs one write, its
 * predecessor's next pointer. TS has none. The heads reach the disk in the tail checkpoint
 * ({@link #heads}). Changes made while an allocation runs are undone with it ({@link
 * AllocationUndo}). Not thread-safe: the heap's lock guards it.
 */
final class DiskLists {
    private final Heap heap;
    /** PL: the first block of each disk list, 0 for none. Empty for TS and PFL. */
    final long[] plHeads;
    /** PFL: the first block of each free list, null for none. Empty for TS and PL. */
    final FreeBlock[] pflHeads;
    /** Whether a head changed since the last tail checkpoint. */
    boolean headsDirty;
    /** At most this many blocks defined since the last sync are skipped; past them a pointer ends the list on disk. */
    static final int SKIP_LIMIT = 16;
    /**
     * PFL: free blocks whose next pointer on disk may skip blocks of their list ({@link
     * #durableFrom}): on disk their lists are not in list order, which a snapshot assumes, so a
     * clean close rewrites them first ({@link #rewriteSkipping}).
     */
    private final java.util.Set<FreeBlock> skipping = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    /** While OBA runs: predecessor link writes, kept to be issued in address order with the batch. */
    List<long[]> deferredLinkWrites;

    DiskLists(Heap heap, StorageMethod method, int lists) {
        this.heap = heap;
        this.plHeads = new long[method == StorageMethod.PL ? lists : 0];
        this.pflHeads = new FreeBlock[method == StorageMethod.PFL ? lists : 0];
    }

    /** Forgets every list, as recovery and replay do before they rebuild them. */
    void clear() {
        java.util.Arrays.fill(plHeads, 0);
        clearPfl();
    }

    /** Forgets PFL's lists, as coalescing does before it links every free block again. */
    void clearPfl() {
        java.util.Arrays.fill(pflHeads, null);
        skipping.clear();
    }

    /** PL: makes {@code addr} the head of list {@code list}; returns the old head, the new block's next pointer. */
    long plPush(int list, long addr) {
        long old = plHeads[list];
        plHeads[list] = addr;
        headsDirty = true;
        heap.undo.record(() -> plHeads[list] = old);
        return old;
    }

    /** PFL: puts {@code b} at the head of its list's in memory; its {@code next} is set, the caller writes it. */
    void pflPush(FreeBlock b) {
        FreeBlock head = pflHeads[b.listId];
        long oldNext = b.next;
        b.listPrev = null;
        b.listNext = head;
        if (head != null) {
            head.listPrev = b;
        }
        pflHeads[b.listId] = b;
        b.next = head == null ? 0 : head.addr;
        headsDirty = true;
        heap.undo.record(() -> {
            pflHeads[b.listId] = head;
            if (head != null) {
                head.listPrev = null;
            }
            b.listNext = null;
            b.next = oldNext;
        });
    }

    /** PFL: unlinks {@code b} from its list; from the middle this rewrites the predecessor's next pointer. */
    void pflUnlink(FreeBlock b) {
        if (skipping.remove(b)) {
            heap.undo.record(() -> skipping.add(b));
        }
        FreeBlock prev = b.listPrev;
        FreeBlock next = b.listNext;
        long prevNext = prev == null ? 0 : prev.next;
        heap.undo.record(() -> {
            b.listPrev = prev;
            b.listNext = next;
            if (next != null) {
                next.listPrev = b;
            }
            if (prev == null) {
                pflHeads[b.listId] = b;
            } else {
                prev.listNext = b;
                prev.next = prevNext; // in memory; a pointer already written on disk stays: PFL's recovery drops allocated blocks
            }
        });
        if (next != null) {
            next.listPrev = prev;
        }
        if (prev == null) {
            pflHeads[b.listId] = next;
            headsDirty = true;
        } else {
            prev.listNext = next;
            prev.next = durableFrom(prev, next);
            if (deferredLinkWrites != null) {
                deferredLinkWrites.add(new long[] {prev.addr + BlockHeader.NEXT_OFFSET, prev.next});
            } else {
                writeNext(prev);
            }
        }
        b.listPrev = null;
        b.listNext = null;
    }

    /**
     * PFL: the next pointer that a free or an unlink writes into the header of {@code from} to
     * name {@code b} and the blocks after it: the first of them whose extent is durable, skipping
     * the blocks defined since the last sync ({@link Heap#fresh}; at most {@link #SKIP_LIMIT}, then
     * 0). A pointer to such a block may name the middle of an older one after a power cut: the
     * block's defining write (a split's remainder, say) may be lost while this write lands, and
     * recovery, which follows a list through every free block defined before the checkpoint, would
     * read whatever header lay there, one a merge swallowed, stale but valid, and put a block that
     * does not exist on its lists. The blocks skipped stay on the list in memory; a crash before
     * the next relink (a coalescing, a clean close) only loses track of them on disk until the next
     * coalescing scan.
     */
    long durableFrom(FreeBlock from, FreeBlock b) {
        FreeBlock d = b;
        for (int n = 0; d != null && heap.fresh.containsKey(d.addr); n++) {
            d = n < SKIP_LIMIT ? d.listNext : null;
        }
        if (d != b && skipping.add(from)) {
            heap.undo.record(() -> skipping.remove(from));
        }
        return d == null ? 0 : d.addr;
    }

    /** Writes {@code b}'s next pointer alone into its header. */
    private void writeNext(FreeBlock b) {
        heap.dev.write(b.addr + BlockHeader.NEXT_OFFSET, ByteBuffer.allocate(8).putLong(0, b.next));
    }

    boolean anySkipping() {
        return !skipping.isEmpty();
    }

    /**
     * After a sync (nothing is then defined since it): writes the next pointer of every free
     * block that may skip blocks of its list in list order, so that the disk matches a snapshot.
     */
    void rewriteSkipping() {
        for (FreeBlock b : skipping) {
            b.next = b.listNext == null ? 0 : b.listNext.addr;
            writeNext(b);
        }
        skipping.clear();
    }

    /**
     * The heads as the tail checkpoint holds them (one address a list, 0 for an empty one; none for TS).
     *
     * @param empty every list empty, as coalescing checkpoints them ({@link Heap#writeCheckpoint(boolean)})
     */
    long[] heads(boolean empty) {
        if (empty) {
            return new long[plHeads.length + pflHeads.length];
        }
        if (pflHeads.length == 0) {
            return plHeads.clone();
        }
        long[] heads = new long[pflHeads.length];
        for (int i = 0; i < heads.length; i++) {
            heads[i] = pflHeads[i] == null ? 0 : pflHeads[i].addr;
        }
        return heads;
    }
}
