package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.htod.core.HtodException;

/**
 * While an allocation runs: how to take back its changes to the heap's in-memory state, newest
 * first, should its device write fail. A failed allocation then leaves the heap as it was, usable.
 * In direct mode the disk is taken back too, as far as recovery reads it: the headers of the
 * blocks the allocation took, then a sync and a tail checkpoint ({@link #restoreHeaders}); if
 * that fails as well, the heap refuses changes until reopened. Not thread-safe: the heap's lock
 * guards it.
 */
final class AllocationUndo {
    private final Heap heap;
    /** The steps that undo the running allocation, newest first; null while none runs. */
    private ArrayDeque<Runnable> steps;
    /** Free blocks the running allocation took off the lists. */
    private List<FreeBlock> taken;
    /** Headers of taken blocks as the running allocation read them before it wrote, by address. */
    private Map<Long, BlockHeader> readBefore;

    AllocationUndo(Heap heap) {
        this.heap = heap;
    }

    /** Adds a step that undoes a change the running allocation just made; outside one, nothing. */
    void record(Runnable step) {
        if (steps != null) {
            steps.push(step);
        }
    }

    /** Notes that the running allocation took {@code b} off the free lists. */
    void took(FreeBlock b) {
        if (taken != null) {
            taken.add(b);
        }
    }

    /** Notes the header of free block {@code addr} as the running allocation read it, before any write to it. */
    void readBefore(long addr, BlockHeader h) {
        if (readBefore != null && h != null) {
            readBefore.putIfAbsent(addr, h);
        }
    }

    /** Runs {@code write} as one allocation: if it fails with a device error, its in-memory changes are undone. */
    <T> T run(Supplier<T> write) {
        steps = new ArrayDeque<>();
        taken = new ArrayList<>();
        readBefore = new HashMap<>();
        try {
            return write.get();
        } catch (HtodException e) {
            ArrayDeque<Runnable> undo = steps;
            List<FreeBlock> blocks = taken;
            Map<Long, BlockHeader> read = readBefore;
            steps = null;
            taken = null;
            readBefore = null;
            while (!undo.isEmpty()) {
                undo.pop().run();
            }
            // A batch that found no room wrote nothing: memory alone had changed.
            if (!heap.logged() && !(e instanceof BatchAllocator.NoRoom)) {
                try {
                    restoreHeaders(blocks, read);
                    // A failed write at the tail may have left headers past it, with stamps a
                    // recovery would believe until a checkpoint of a later stamp is durable. A
                    // checkpoint names a tail below which every block is durable: so a sync first,
                    // which also makes the restored headers durable.
                    heap.sync();
                    heap.writeCheckpoint();
                } catch (HtodException again) {
                    e.addSuppressed(again);
                    heap.failed(again);
                }
            }
            throw e;
        } finally {
            steps = null;
            taken = null;
            readBefore = null;
        }
    }

    /**
     * Direct mode, after a failed allocation: writes the header of each block it took as the
     * free lists hold it again. A device may fail a request midway (the disk filling up, an I/O
     * error) after some of it landed: the allocated status, or a split's header naming a smaller
     * extent with a newer stamp. A sync would make that durable, after which the block's next use
     * writes its status word alone (it is no longer fresh) and the disk names an extent that
     * memory does not: recovery by headers would take the failed split's remainder, inside live
     * data, for a free block. A header still naming the block's extent (its size; a fresh one's
     * stamp) gets its status word. Any other, which a split or a partial write changed, gets the
     * whole header with the extent's stamp and remainder note as the block's fresh entry or the
     * allocation's read of the header name them, else with a note of 0. No note is still needed
     * there: the block is not fresh, so the write that defined it, with its remainder's header, is
     * durable, or a crash tore it and the open's scan, which applies the remainder rule to every
     * block, wrote that header back ({@link HeapRecovery#rebuildFreeLists}). Direct mode
     * only: log mode's recovery reads no free block's header, and every allocation there writes
     * the whole one. Should this fail as well, the caller makes the heap refuse changes.
     */
    private void restoreHeaders(List<FreeBlock> blocks, Map<Long, BlockHeader> read) {
        for (FreeBlock b : blocks) {
            Heap.FreshExtent f = heap.fresh.get(b.addr);
            BlockHeader h = heap.headerAt(b.addr);
            if (h != null && h.size == b.size && (f == null || h.stamp == f.stamp())) {
                ByteBuffer status = ByteBuffer.allocate(8);
                BlockHeader.putStatus(status, 0, false, 0);
                heap.dev.write(b.addr + BlockHeader.STATUS_OFFSET, status);
                continue;
            }
            BlockHeader before = read.get(b.addr);
            long stamp = f != null ? f.stamp() : before != null ? before.stamp : b.stamp;
            long remainder = f != null ? f.remainder() : before != null ? before.remainder : 0;
            ByteBuffer whole = ByteBuffer.allocate(BlockHeader.SIZE);
            BlockHeader.put(whole, 0, heap.code, b.size, stamp, remainder, b.listId < 0 ? BlockHeader.NO_LIST : b.listId,
                    false, 0, b.next, heap.grain);
            heap.dev.write(b.addr, whole);
        }
    }
}
