package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;
import org.htod.core.CorruptStoreException;
import org.htod.core.container.StorageMethod;

/**
 * Log mode's recovery of the allocator: a heap restored from the snapshot of the last checkpoint
 * ({@link Heap#fromSnapshot}) is brought forward by the allocations and frees the log recorded
 * since, in the order it recorded them. Works in memory on an address index of the free space,
 * reads nothing and writes nothing (the frees' status bytes are queued for {@link
 * Heap#finishOpen()}); the free lists are rebuilt by {@link #finish()}.
 *
 * <p>An allocation must take space that is free at that point of the replay, and a free must
 * give back space that is not: anything else means the log and the snapshot disagree, and is
 * reported rather than guessed at.
 */
public final class HeapReplay {
    private final Heap h;
    /** Free extents by address: start to size. */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    private long tail;
    private long claims;
    private long releases;
    /** Blocks freed by the log, whose status byte is written free again if still free at the end. */
    private final java.util.List<Long> freed = new java.util.ArrayList<>();

    public HeapReplay(Heap h) {
        this.h = h;
        for (FreeBlock b : h.lists.all()) {
            free.put(b.addr, b.size);
        }
        this.tail = h.tail;
    }

    private CorruptStoreException disagree(long handle, String what) {
        long a = h.address(handle);
        return new CorruptStoreException("the log of " + h.dev.name() + " records " + what + " the block at offset " + a
                + " of " + h.blockSize(handle) + " bytes, which the checkpoint and the records before do not allow", a);
    }

    private void checkExtent(long handle) {
        long a = h.address(handle);
        long size = h.blockSize(handle);
        if (a < h.start || size <= 0 || a > h.end - size) {
            throw new CorruptStoreException("the log of " + h.dev.name() + " names a block at offset " + a + " of " + size
                    + " bytes, outside the heap [" + h.start + ", " + h.end + ")", a);
        }
    }

    /** The block {@code handle} was allocated: its extent leaves the free space (or the tail). */
    public void claim(long handle) {
        checkExtent(handle);
        long a = h.address(handle);
        long e = a + h.blockSize(handle);
        long cur;
        if (a >= tail) {
            if (a > tail) {
                free.put(tail, a - tail); // space the tail passed over without a block the log knows of
            }
            tail = e;
            cur = e;
        } else {
            Map.Entry<Long, Long> f = free.floorEntry(a);
            if (f == null || f.getKey() + f.getValue() <= a) {
                throw disagree(handle, "an allocation of");
            }
            cur = take(f.getKey(), f.getValue(), a, e);
        }
        while (cur < e) {
            if (cur == tail) {
                tail = e;
                break;
            }
            Long size = free.get(cur);
            if (size == null) {
                throw disagree(handle, "an allocation over allocated space at offset " + cur + " of");
            }
            cur = take(cur, size, cur, e);
        }
        h.allocatedBytes += e - a;
        h.requestedBytes += e - a;
        h.allocatedCount++;
        claims++;
    }

    /** Takes {@code [a, e)} out of the free extent {@code [fs, fs + size)}; returns where the taken part ends. */
    private long take(long fs, long size, long a, long e) {
        long fe = fs + size;
        free.remove(fs);
        if (fs < a) {
            free.put(fs, a - fs);
        }
        if (fe > e) {
            free.put(e, fe - e);
            return e;
        }
        return fe;
    }

    /** The block {@code handle} was freed: its extent joins the free space. */
    public void release(long handle) {
        checkExtent(handle);
        long a = h.address(handle);
        long size = h.blockSize(handle);
        Map.Entry<Long, Long> before = free.floorEntry(a + size - 1);
        if (a + size > tail || (before != null && before.getKey() + before.getValue() > a)) {
            throw disagree(handle, "a free of");
        }
        free.put(a, size);
        h.allocatedBytes -= size;
        h.requestedBytes = Math.max(0, h.requestedBytes - size);
        h.allocatedCount--;
        releases++;
        freed.add(handle);
    }

    /**
     * Claims the block {@code handle} if all of its extent is free at this point of the replay
     * (or past the tail) and returns true; returns false if its first byte is allocated. For a
     * block that a log record names but no install record may have recorded yet: a block claimed
     * so is allocated unrecorded ({@link UnrecordedBlocks#record} records it when installed).
     *
     * @throws CorruptStoreException if the extent lies outside the heap, or is partly free
     */
    public boolean claimUnrecordedIfFree(long handle) {
        checkExtent(handle);
        if (allocated(handle)) {
            return false;
        }
        claim(handle); // throws if the extent runs into allocated space
        h.unrecorded().add(handle);
        return true;
    }

    /** Whether the block {@code handle} is allocated at this point of the replay. */
    public boolean allocated(long handle) {
        long a = h.address(handle);
        if (a >= tail) {
            return false;
        }
        Map.Entry<Long, Long> f = free.floorEntry(a);
        return f == null || f.getKey() + f.getValue() <= a;
    }

    /** Allocations and frees replayed so far. */
    public long[] counts() {
        return new long[] {claims, releases};
    }

    /** Rebuilds the heap's free lists and tail from the replayed free space. */
    public void finish() {
        // A free's own status write may have been lost with the crash: made again on finishing the
        // open, for the blocks no later allocation took.
        for (long handle : freed) {
            if (!allocated(handle)) {
                h.pendingRepairs.add(new Heap.Repair(h.address(handle) + BlockHeader.STATUS_OFFSET,
                        ByteBuffer.allocate(1).put(0, BlockHeader.FREE)));
            }
        }
        h.lists.clear();
        h.diskLists.clear();
        h.tail = tail;
        h.highWater = Math.max(h.highWater, tail);
        for (Map.Entry<Long, Long> f : free.entrySet()) {
            long size = f.getValue();
            int listId = h.method == StorageMethod.TS ? BlockHeader.NO_LIST : h.lists.listOf(size);
            FreeBlock b = new FreeBlock(f.getKey(), size, h.stamp, listId, 0);
            if (h.method == StorageMethod.PFL) {
                h.diskLists.pflPush(b);
            }
            h.lists.add(b);
        }
        h.diskLists.headsDirty = true;
        h.markDurable();
    }
}
