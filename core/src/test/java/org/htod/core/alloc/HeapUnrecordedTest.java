package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.htod.core.CorruptStoreException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Blocks allocated unrecorded (a placed value's, in log mode): the journal hears of them only
 * when they are recorded, once; a snapshot counts them free, and recovery takes one back only
 * where its whole extent is free; one given back unrecorded leaves no trace in the journal; and
 * they reuse free space before the tail, syncing first when the only room is in blocks freed
 * since the last sync.
 */
class HeapUnrecordedTest {
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void theJournalHearsOfABlockOnceAndTheSnapshotCountsItFreeUntilThen(StorageMethod method) {
        CountingDevice dev = new CountingDevice(new MemoryDevice(), false);
        HeapOptions opt = HeapFixture.options(method);
        Heap h = Heap.create(dev, opt);
        ListJournal j = new ListJournal();
        h.useJournal(j);
        long a = h.allocate(HeapFixture.payload(1, 3000));
        long u = h.allocateUnrecorded(HeapFixture.payload(2, 5000));
        long gone = h.allocateUnrecorded(HeapFixture.payload(3, 700));
        assertEquals(List.of(a), j.allocated, "an unrecorded allocation is not journaled");
        assertTrue(h.unrecorded().contains(u));
        assertEquals(HeapFixture.payload(2, 5000), h.read(u), "written whole, as any allocation");
        assertTrue(h.unrecorded().release(gone));
        assertFalse(h.unrecorded().contains(gone));
        assertEquals(List.of(), j.freed, "given back unrecorded: nothing for the log to record");

        ByteBuffer snapshot = h.snapshot();
        Heap back = Heap.fromSnapshot(dev, opt, snapshot, "test snapshot");
        assertEquals(Set.of(a), allocated(back), "the snapshot counts the unrecorded block free");
        HeapReplay replay = new HeapReplay(back);
        assertFalse(replay.claimUnrecordedIfFree(a), "an allocated block is not taken again");
        assertTrue(replay.claimUnrecordedIfFree(u), "a free one is taken back");
        replay.finish();
        assertEquals(Set.of(a, u), allocated(back));
        assertTrue(back.unrecorded().contains(u), "and stays unrecorded until its install records it");

        h.unrecorded().record(u);
        h.unrecorded().record(u); // an install tried again
        assertEquals(List.of(a, u), j.allocated, "recorded once");
        assertFalse(h.unrecorded().contains(u));
        assertFalse(h.unrecorded().release(u), "a recorded block is freed by its table, not given back here");
        assertEquals(Set.of(a, u), allocated(h));
        assertEquals(Set.of(a, u), allocated(Heap.fromSnapshot(dev, opt, h.snapshot(), "after")));
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void recoveryRefusesToTakeBackAnExtentThatIsPartlyAllocated(StorageMethod method) {
        Heap h = Heap.create(new MemoryDevice(), HeapFixture.options(method));
        h.useJournal(new ListJournal());
        long x = h.allocate(HeapFixture.payload(1, 2000));
        long y = h.allocate(HeapFixture.payload(2, 2000));
        h.free(x);
        Heap back = Heap.fromSnapshot(h.device(), HeapFixture.options(method), h.snapshot(), "test");
        HeapReplay replay = new HeapReplay(back);
        long both = back.handle(back.address(x), back.blockSize(x) + back.blockSize(y));
        assertEquals(back.address(y), back.address(x) + back.blockSize(x), "x and y adjacent");
        assertThrows(CorruptStoreException.class, () -> replay.claimUnrecordedIfFree(both));
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void freeSpaceIsReusedBeforeTheTailSyncingWhenOnlyFreshBlocksWouldDo(StorageMethod method) {
        CountingDevice dev = new CountingDevice(new MemoryDevice(), false);
        Heap h = Heap.create(dev, HeapFixture.options(method));
        h.useJournal(new ListJournal());
        List<Long> blocks = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            blocks.add(h.allocate(HeapFixture.payload(i, 20_000)));
        }
        h.sync();
        long tail = h.tail();
        h.free(blocks.get(5)); // freed, not yet durable: it may be used whole, not split
        long syncs = dev.counts().syncs();
        long u = h.allocateUnrecorded(HeapFixture.payload(100, 6000));
        assertTrue(h.address(u) < tail, "placed in the freed block, not at the tail " + tail + ": " + h.address(u));
        assertEquals(syncs + 1, dev.counts().syncs(), "one sync made the freed block's extent durable, to split it");
        long v = h.allocateUnrecorded(HeapFixture.payload(101, 6000));
        assertTrue(h.address(v) < tail, "the remainder serves the next one too: " + h.address(v));
        assertEquals(tail, h.tail(), "the heap did not grow");
        assertEquals(HeapFixture.payload(100, 6000), h.read(u));
        assertEquals(HeapFixture.payload(101, 6000), h.read(v));
        assertEquals(0, h.verify().leakedBlocks());
    }

    private static Set<Long> allocated(Heap h) {
        Set<Long> out = new TreeSet<>();
        h.forEachAllocated((handle, len) -> out.add(handle));
        return out;
    }
}
