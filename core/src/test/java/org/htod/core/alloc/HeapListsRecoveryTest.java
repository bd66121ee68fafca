package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Recovery by the PL/PFL lists reads only the blocks on the lists, so it cannot apply the
 * remainder rule to a block it does not reach: a torn split that kept the allocated part's header
 * (with its note of the remainder) and lost the remainder's header leaves a hole only that note
 * describes. These are the cases {@code HeapCrashTest} found at 100 times its default length.
 */
class HeapListsRecoveryTest {

    /** The note must outlive the recovery and the next split of its block: the split checks it. */
    @ParameterizedTest
    @EnumSource(names = {"PL", "PFL"})
    void aSplitAfterRecoveryByListsRebuildsTheRemainderATornSplitLost(StorageMethod method) {
        MemoryDevice disk = new MemoryDevice();
        HeapOptions opt = HeapFixture.options(method, 64, 4, 0, 1 << 20);
        long[] xAndAfter = tornSplit(disk, opt);
        long x = xAndAfter[0];
        Heap back = recoverByLists(disk, opt);

        back.free(x); // x was in flight: the application frees it, and asks for a smaller block
        long y = back.allocate(HeapFixture.payload(4, 5120 - BlockHeader.SIZE));
        assertEquals(back.address(x), back.address(y), "x's block was split again, rewriting its header");
        assertEquals(1, back.notesRepaired, "the split found the lost remainder through x's note and wrote it");

        back.coalesce(); // a scan from the first block: it must cross what the torn split left
        assertEquals(0, back.uncheckedNotesBelow, "the coalescing scan applied the remainder rule everywhere");
        assertEquals(0, back.verify().leakedBlocks());
        assertEquals(HeapFixture.payload(2, 100), back.read(xAndAfter[1]));
        assertEquals(HeapFixture.payload(4, 5120 - BlockHeader.SIZE), back.read(y));
        back.close();
    }

    /** A snapshot would forget that notes are unchecked: a clean close coalesces first, which checks them all. */
    @ParameterizedTest
    @EnumSource(names = {"PL", "PFL"})
    void aCleanCloseAfterRecoveryByListsChecksEveryNoteFirst(StorageMethod method) {
        MemoryDevice disk = new MemoryDevice();
        HeapOptions opt = HeapFixture.options(method, 64, 4, 0, 1 << 20);
        long[] xAndAfter = tornSplit(disk, opt);
        Heap back = recoverByLists(disk, opt);
        long coalesces = back.coalesces;
        Heap.SnapshotRef ref = back.shutdown();
        assertEquals(coalesces + 1, back.coalesces, "the close coalesced");
        assertNotNull(ref);
        Heap again = Heap.open(disk, opt, ref);
        assertEquals("snapshot", again.report.path());
        assertEquals(0, again.uncheckedNotesBelow);
        assertEquals(0, again.verify().leakedBlocks(), "the remainder the tear lost is free space again");
        again.free(xAndAfter[0]);
        again.coalesce();
        assertEquals(HeapFixture.payload(2, 100), again.read(xAndAfter[1]));
        again.close();
    }

    /**
     * A free block of 10112 bytes, durable and on its list, split into x (7040 bytes) and a
     * remainder of 3072, then power lost with x's sector landed and the remainder's not.
     * Returns {x, a synced block after them}.
     */
    private static long[] tornSplit(MemoryDevice disk, HeapOptions opt) {
        Heap h = Heap.create(disk, opt); // grain 64: one misc list holds 5120..10239
        long big = h.allocate(HeapFixture.payload(1, 10112 - BlockHeader.SIZE));
        long after = h.allocate(HeapFixture.payload(2, 100));
        h.free(big);
        h.sync();
        h.sync(); // the tail checkpoint naming the free block is durable too
        long x = h.allocate(HeapFixture.payload(3, 7040 - BlockHeader.SIZE));
        assertEquals(h.address(big), h.address(x), "split off the free block");
        disk.write(h.address(x) + 7040, ByteBuffer.allocate(BlockHeader.SIZE));
        return new long[] {x, after}; // h is abandoned, as a crash leaves it
    }

    private static Heap recoverByLists(MemoryDevice disk, HeapOptions opt) {
        Heap back = Heap.open(disk, opt, null);
        back.finishOpen();
        assertEquals("lists", back.report.path(), back.report.toString());
        assertTrue(back.uncheckedNotesBelow > 0);
        return back;
    }
}
