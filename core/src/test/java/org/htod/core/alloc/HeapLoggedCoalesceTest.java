package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A heap in log mode coalesces in memory only. Its frees write nothing, so the headers on disk say
 * allocated for blocks freed since: the direct path, which rebuilds PL and PFL lists from those
 * headers before it merges, turned freed space into blocks allocated for good and wrote free
 * headers the log does not record. In memory, nothing is read or written, and the log's replay
 * (over free extents by address) takes an allocation spanning what were several free blocks.
 */
class HeapLoggedCoalesceTest {
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void logModeCoalescesInMemoryAndTheLogReplaysOverTheMergedSpace(StorageMethod method) {
        CountingDevice dev = new CountingDevice(new MemoryDevice(), false);
        HeapOptions opt = HeapFixture.options(method);
        Heap h = Heap.create(dev, opt);
        RecordingJournal journal = new RecordingJournal();
        h.useJournal(journal);
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            live.add(h.allocate(HeapFixture.payload(i, 4100 + i % 7 * 100)));
        }
        ByteBuffer snapshot = h.snapshot(); // the checkpoint the log's replay starts from
        journal.clear();
        List<Long> kept = new ArrayList<>();
        for (int i = 0; i < live.size(); i++) {
            if (i % 3 == 2) {
                kept.add(live.get(i));
            } else {
                h.free(live.get(i)); // in log mode this writes nothing to the block's header
            }
        }
        long writesBefore = dev.counts().writes();
        long readsBefore = dev.counts().reads();
        h.coalesce();
        assertEquals(writesBefore, dev.counts().writes(), "a log-mode merge writes nothing");
        assertEquals(readsBefore, dev.counts().reads(), "a log-mode merge reads nothing");
        for (int i = 0; i < 500; i++) {
            kept.add(h.allocate(HeapFixture.payload(10_000 + i, 6000 + i % 5 * 1000 + 4000 * (i % 3))));
        }
        HeapStats s = h.stats();
        assertTrue(s.coalesces() > 0);
        assertEquals(kept.size(), s.allocatedBlocks(), method + ": " + s);
        Set<Long> allocated = RecordingJournal.allocatedSet(h);
        assertEquals(new TreeSet<>(kept), allocated, "every allocated block is one the heap allocated and did not free");
        assertTrue(kept.stream().anyMatch(k -> spansTwoFormerBlocks(h, k, live)),
                "some allocation took space that was two free blocks before the merge (what the replay must take)");
        assertEquals(0, h.verify().leakedBlocks());
        for (int i = 0; i < 500; i++) {
            long k = kept.get(kept.size() - 500 + i);
            assertEquals(HeapFixture.payload(10_000 + i, 6000 + i % 5 * 1000 + 4000 * (i % 3)), h.read(k));
        }

        // A crash: the heap comes back from the snapshot and the journal, as log mode's recovery does it.
        Heap back = journal.replayOver(h, snapshot);
        assertEquals(allocated, RecordingJournal.allocatedSet(back),
                "the replay over the unmerged snapshot finds the same blocks");
        assertEquals(s.allocatedBytes(), back.stats().allocatedBytes());
    }

    /** Whether block {@code k} covers the start of one of the original blocks other than its own first one. */
    private static boolean spansTwoFormerBlocks(Heap h, long k, List<Long> original) {
        long a = h.address(k);
        long e = a + h.blockSize(k);
        return original.stream().anyMatch(o -> h.address(o) > a && h.address(o) < e);
    }
}
