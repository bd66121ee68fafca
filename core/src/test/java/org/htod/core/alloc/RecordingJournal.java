package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A log-mode heap's journal for tests: the allocations and frees in order, as the log records
 * them, and their replay over a snapshot, as log mode's recovery makes it.
 */
final class RecordingJournal implements Heap.Journal {
    /** {1, handle} allocated, {0, handle} freed, in order. */
    private final List<long[]> events = new ArrayList<>();

    @Override
    public void allocated(long handle) {
        events.add(new long[] {1, handle});
    }

    @Override
    public void freed(long handle) {
        events.add(new long[] {0, handle});
    }

    /** Forgets what was recorded: a checkpoint's snapshot is taken now. */
    void clear() {
        events.clear();
    }

    /** The heap as a crash brings it back: {@code snapshot}, then what was recorded since, replayed. */
    Heap replayOver(Heap heap, ByteBuffer snapshot) {
        Heap back = Heap.fromSnapshot(heap.device(), heap.opt, snapshot, "test snapshot");
        HeapReplay replay = new HeapReplay(back);
        for (long[] e : events) {
            if (e[0] == 1) {
                replay.claim(e[1]);
            } else {
                replay.release(e[1]);
            }
        }
        replay.finish();
        return back;
    }

    /** The handles of every block {@code h} holds allocated. */
    static Set<Long> allocatedSet(Heap h) {
        Set<Long> out = new TreeSet<>();
        h.forEachAllocated((handle, len) -> out.add(handle));
        return out;
    }
}
