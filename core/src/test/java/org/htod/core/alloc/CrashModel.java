package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.core.container.StorageMethod;

/**
 * What a heap under power cuts must hold: the blocks allocated and synced (and not freed since)
 * whole, and besides them only blocks the operations since the last sync may have left: those
 * allocated since, those freed since (a free may be lost), and those of the operation the power
 * cut. After a recovery has been checked, what it found becomes the new synced state.
 */
final class CrashModel {
    /** Handle to {id, length} of its payload; length -1 when a crash may have torn it. */
    final Map<Long, long[]> live = new HashMap<>();
    private Map<Long, long[]> synced = new HashMap<>();
    private final Set<Long> freedSinceSync = new HashSet<>();
    private final Set<Long> allocatedSinceSync = new HashSet<>();
    private final List<Long> handles = new ArrayList<>();
    /** Most blocks and bytes the operation under way may leave allocated if the power fails in it. */
    long inFlightBlocks;
    long inFlightBytes;
    /** Most blocks and bytes allocations that failed since the last sync may leave allocated. */
    private long failedBlocks;
    private long failedBytes;

    boolean isEmpty() {
        return handles.isEmpty();
    }

    void allocated(long handle, long id, int len) {
        live.put(handle, new long[] {id, len});
        handles.add(handle);
        allocatedSinceSync.add(handle);
    }

    /**
     * The operation under way failed with a device error and was undone: its writes may still
     * have reached the disk, and a power cut before the next sync may keep them and lose the
     * writes that took them back.
     */
    void failed() {
        failedBlocks += inFlightBlocks;
        failedBytes += inFlightBytes;
        inFlightBlocks = 0;
        inFlightBytes = 0;
    }

    /** Picks a live block at random and forgets it, as the caller frees it. */
    long takeRandom(SplittableRandom r) {
        int at = r.nextInt(handles.size());
        long handle = handles.get(at);
        handles.set(at, handles.get(handles.size() - 1));
        handles.remove(handles.size() - 1);
        live.remove(handle);
        freedSinceSync.add(handle);
        return handle;
    }

    void synced() {
        failedBlocks = 0;
        failedBytes = 0;
        synced = new HashMap<>(live);
        freedSinceSync.clear();
        allocatedSinceSync.clear();
    }

    /**
     * Checks the heap {@code back} reopened after a power cut, then adopts what it holds as the
     * synced state: every block it holds is one it may hold, the synced ones whole.
     */
    void checkAndAdopt(Heap back, StorageMethod method, String context) {
        HeapVerifyReport v;
        try {
            v = back.verify();
        } catch (RuntimeException e) {
            throw new AssertionError("the recovered heap does not verify " + context + ": " + e, e);
        }
        for (Map.Entry<Long, long[]> e : synced.entrySet()) {
            long[] m = e.getValue();
            if (!freedSinceSync.contains(e.getKey()) && m[1] >= 0) {
                assertEquals(HeapFixture.payload(m[0], (int) m[1]), back.read(e.getKey()),
                        "synced block " + Long.toHexString(e.getKey()) + " " + context);
            }
        }
        long[] others = {0, 0};
        Map<Long, long[]> found = new HashMap<>();
        back.forEachAllocated((handle, length) -> {
            long[] m = synced.containsKey(handle) && !freedSinceSync.contains(handle) ? synced.get(handle) : null;
            if (m == null && !freedSinceSync.contains(handle) && !allocatedSinceSync.contains(handle)) {
                others[0]++;
                others[1] += back.blockSize(handle);
            }
            long[] known = m != null ? m : live.get(handle);
            boolean whole = known != null && known[1] == length && whole(back, handle, known);
            found.put(handle, whole ? known : new long[] {-1, -1});
        });
        assertTrue(others[0] <= inFlightBlocks + failedBlocks && others[1] <= inFlightBytes + failedBytes, others[0]
                + " blocks of " + others[1] + " bytes are allocated that no operation since the last sync made (in"
                + " flight: " + inFlightBlocks + " blocks, " + inFlightBytes + " bytes; failed: " + failedBlocks
                + " blocks, " + failedBytes + " bytes): old headers taken for new ones? " + context);
        // Every block free on disk is on the free lists: TS's recovery scans every header, and PL's
        // and PFL's rebuild their free lists from such a scan. A PL remainder split off since the
        // checkpoint, a PFL list cut at a head taken since it, a block freed since it, or any of
        // them below the tail of a checkpoint a coalescing cut short left with empty lists, would
        // be a leak the verifier counts.
        assertEquals(0, v.leakedBlocks(), method + "'s recovery takes its free blocks from a scan of every header, so"
                + " it loses track of none: " + v + " " + context);
        live.clear();
        handles.clear();
        live.putAll(found);
        handles.addAll(found.keySet());
        handles.sort(null); // a replay draws the same blocks whatever the hash order
        inFlightBlocks = 0;
        inFlightBytes = 0;
        synced();
    }

    /**
     * Whether a block holds the payload the model knows. A block allocated since the last sync may
     * have been torn, even past the end of the device (its header kept, the rest lost): reading it
     * may then fail, which is no error of the heap's.
     */
    private static boolean whole(Heap h, long handle, long[] known) {
        try {
            return HeapFixture.payload(known[0], (int) known[1]).equals(h.read(handle));
        } catch (org.htod.core.HtodException torn) {
            return false;
        }
    }

    /** Whole blocks the model knows the content of, for a last check after more allocations. */
    void checkContents(Heap h, String context) {
        for (Map.Entry<Long, long[]> e : live.entrySet()) {
            long[] m = e.getValue();
            if (m[1] >= 0) {
                assertEquals(HeapFixture.payload(m[0], (int) m[1]), h.read(e.getKey()),
                        "block " + Long.toHexString(e.getKey()) + " " + context);
            }
        }
    }
}
