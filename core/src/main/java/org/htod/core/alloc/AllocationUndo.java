package org.htod.core.alloc;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.htod.core.HtodException;

/**
 * While an allocation runs: how to take back its changes to the heap's in-memory state, newest
 * first, should its device write fail. A failed allocation then leaves the heap as it was, usable.
 * Not thread-safe: the heap's lock guards it.
 */
final class AllocationUndo {
    private final Heap heap;
    /** The steps that undo the running allocation, newest first; null while none runs. */
    private ArrayDeque<Runnable> steps;
    /** Free blocks the running allocation took off the lists. */
    private List<FreeBlock> taken;

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

    /** Runs {@code write} as one allocation: if it fails with a device error, its in-memory changes are undone. */
    <T> T run(Supplier<T> write) {
        steps = new ArrayDeque<>();
        taken = new ArrayList<>();
        try {
            return write.get();
        } catch (HtodException e) {
            ArrayDeque<Runnable> undo = steps;
            List<FreeBlock> blocks = taken;
            steps = null;
            taken = null;
            while (!undo.isEmpty()) {
                undo.pop().run();
            }
            markRewrite(blocks);
            throw e;
        } finally {
            steps = null;
            taken = null;
        }
    }

    /**
     * After a failed allocation: a block it took is back on its list, but the failed write may
     * have reached its header, so its next use writes the whole header and does not split it
     * before a sync.
     */
    private void markRewrite(List<FreeBlock> blocks) {
        for (FreeBlock b : blocks) {
            heap.fresh.put(b.addr, new Heap.FreshExtent(b.stamp, 0, b.listId < 0 ? BlockHeader.NO_LIST : b.listId, b.next));
        }
    }
}
