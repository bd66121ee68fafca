package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.List;
import org.htod.core.CorruptStoreException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A log-mode heap hands a freed block out again at once, whole, before any sync: the free and
 * the new allocation of the same extent follow each other in the journal. An install record
 * lists its allocations and its frees apart, and the replay redoes its allocations first, so
 * such a pair is replayed only in the order the journal heard it: the free in one record, the
 * allocation in a later one (or, within one record, a block allocated and then freed, which
 * the replay's order matches). Listed in one record, the allocation would meet its extent still
 * allocated and the replay refuses the log; the write layer never records a free before the
 * heap frees the block (a commit frees what its record unlinks only once that record is
 * durable), which is what keeps such a record from being written.
 */
class FreedThenReusedReplayTest {
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFreedBlockReusedAtOnceReplaysOnlyWithItsFreeInAnEarlierRecord(StorageMethod method) {
        HeapOptions opt = HeapFixture.options(method);
        Heap h = Heap.create(new MemoryDevice(), opt);
        ListJournal j = new ListJournal();
        h.useJournal(j);
        long keep = h.allocate(HeapFixture.payload(1, 900));
        long x = h.allocate(HeapFixture.payload(2, 900));
        h.allocate(HeapFixture.payload(3, 900)); // x is not at the tail
        h.sync();
        ByteBuffer snapshot = h.snapshot();
        j.allocated.clear();

        h.free(x);
        long y = h.allocate(HeapFixture.payload(4, 900));
        assertEquals(x, y, "the freed block is handed out again whole, before any sync");
        assertEquals(List.of(x), j.freed);
        assertEquals(List.of(y), j.allocated);

        // One record listing both: its allocation replayed first meets x still allocated.
        HeapReplay oneRecord = new HeapReplay(Heap.fromSnapshot(h.device(), opt, snapshot.duplicate(), "one record"));
        CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> oneRecord.claim(y));
        assertEquals(h.address(x), e.offset(), e.getMessage());

        // The free in one record, the reuse in the next: replayed as it happened.
        Heap back = Heap.fromSnapshot(h.device(), opt, snapshot.duplicate(), "two records");
        HeapReplay twoRecords = new HeapReplay(back);
        twoRecords.release(x);
        twoRecords.claim(y);
        twoRecords.finish();
        assertEquals(RecordingJournal.allocatedSet(h), RecordingJournal.allocatedSet(back));
        assertEquals(true, RecordingJournal.allocatedSet(back).contains(keep));
    }
}
