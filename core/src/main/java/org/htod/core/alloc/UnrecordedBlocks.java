package org.htod.core.alloc;

import java.util.HashSet;
import java.util.Set;

/**
 * Log mode: the heap's blocks that {@link Heap#allocateUnrecorded} allocated and its journal has
 * not been told of yet, so that no install record names them: a placed value's block until its
 * install records it ({@link #record}), or until it is given back ({@link #release}). A
 * checkpoint's snapshot counts them free, since recovery learns of them from the log records that
 * name them and takes back those it needs ({@link HeapReplay#claimUnrecordedIfFree}); the verifier
 * does not call them leaked.
 *
 * <p>Guarded by the heap's lock, which each method takes (it is reentrant), so that a block is
 * never seen neither unrecorded nor free, nor recorded twice.
 */
public final class UnrecordedBlocks {
    private final Heap heap;
    private final Set<Long> blocks = new HashSet<>();

    UnrecordedBlocks(Heap heap) {
        this.heap = heap;
    }

    /** A block just allocated unrecorded, or taken back by recovery. */
    void add(long handle) {
        heap.lock.lock();
        try {
            blocks.add(handle);
        } finally {
            heap.lock.unlock();
        }
    }

    /**
     * Tells the journal of {@code handle}, as {@link Heap#allocate} would have: the next install
     * record lists it. Nothing if it was told already, so that an install tried again records the
     * block once.
     */
    public void record(long handle) {
        heap.lock.lock();
        try {
            heap.ensureWritable();
            if (blocks.remove(handle)) {
                heap.journalAllocated(handle);
            }
        } finally {
            heap.lock.unlock();
        }
    }

    /**
     * An install that recorded {@code handle} ({@link #record}) failed before any table linked
     * it: unrecorded again, as it was. The caller takes it off the journal too, whose next record
     * would list it.
     */
    public void unrecord(long handle) {
        heap.lock.lock();
        try {
            blocks.add(handle);
        } finally {
            heap.lock.unlock();
        }
    }

    /**
     * Gives {@code handle} back, in memory only ({@link Heap#release}); returns false, doing
     * nothing, if it was recorded since (a table may hold it: it is freed as any other block, by
     * the table that unlinks it).
     */
    public boolean release(long handle) {
        heap.lock.lock();
        try {
            if (!blocks.remove(handle)) {
                return false;
            }
            heap.release(handle);
            return true;
        } finally {
            heap.lock.unlock();
        }
    }

    /** Whether {@code handle} is unrecorded: allocated, and not yet recorded or given back. */
    public boolean contains(long handle) {
        heap.lock.lock();
        try {
            return blocks.contains(handle);
        } finally {
            heap.lock.unlock();
        }
    }

    /** How many blocks are unrecorded. */
    public int count() {
        heap.lock.lock();
        try {
            return blocks.size();
        } finally {
            heap.lock.unlock();
        }
    }

    /** {@code alsoFree} and every unrecorded block, for a snapshot; the caller holds the heap's lock. */
    long[] withAll(long[] alsoFree) {
        if (blocks.isEmpty()) {
            return alsoFree;
        }
        long[] all = java.util.Arrays.copyOf(alsoFree, alsoFree.length + blocks.size());
        int i = alsoFree.length;
        for (long h : blocks) {
            all[i++] = h;
        }
        return all;
    }
}
