package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.htod.table.InstallRecord;
import org.junit.jupiter.api.Test;

/**
 * Which link writes of the install records after a checkpoint a replay redoes
 * ({@link LoggedOpen#linksToRedo}): a link is redone only into the entry that holds its block at
 * the end of the log. Blocks are named by address here (handle = address).
 */
class ReplayLinksTest {
    private static final long A = 4096;
    private static final long B = 8192;

    /** One install record: its allocations, its frees, and links into {@code next} of the blocks given, value 1. */
    private static InstallRecord record(long[] allocs, long[] frees, long... linksInto) {
        ByteBuffer b = ByteBuffer.allocate(16 + 8 * allocs.length + 8 * frees.length + 28 * linksInto.length);
        b.putInt(allocs.length);
        for (long a : allocs) {
            b.putLong(a);
        }
        b.putInt(frees.length);
        for (long f : frees) {
            b.putLong(f);
        }
        b.putInt(linksInto.length);
        for (long block : linksInto) {
            b.putLong(block).putInt(0).putLong(1).putLong(0x5A17);
        }
        b.putInt(0);
        return InstallRecord.decode(b.flip(), 0, "test");
    }

    private static Map<Long, InstallRecord.LinkWrite> redo(InstallRecord... records) {
        return LoggedOpen.linksToRedo(new ArrayList<>(List.of(records)), h -> h);
    }

    private static final long[] NONE = {};

    @Test
    void aLinkIntoABlockALaterRecordFreesIsNotRedone() {
        assertEquals(List.of(B), List.copyOf(redo(record(NONE, NONE, A, B), record(NONE, new long[] {A})).keySet()));
    }

    /**
     * A commit whose link writes failed after its record was durable: the next commit records
     * those links again (one into block A, which the first record unlinked and freed), then frees
     * A; a later record allocates A for a new entry. Redone, the link would overwrite the new
     * entry's next link with one checked against the old entry's head.
     */
    @Test
    void aLinkIntoABlockALaterRecordAllocatesIsNotRedone() {
        Map<Long, InstallRecord.LinkWrite> links = redo(record(NONE, new long[] {A}, A), record(NONE, NONE, A, B),
                record(new long[] {A}, NONE));
        assertEquals(List.of(B), List.copyOf(links.keySet()));
    }

    @Test
    void aLinkIntoABlockAllocatedAtOrBeforeItsRecordIsRedone() {
        assertEquals(List.of(A), List.copyOf(redo(record(new long[] {A}, NONE, A)).keySet()), "the same record");
        assertEquals(List.of(A), List.copyOf(redo(record(NONE, new long[] {A}), record(new long[] {A}, NONE),
                record(NONE, NONE, A)).keySet()), "a record after the block's reuse");
    }

    /**
     * A commit whose link writes failed after its record was durable: the next commit records
     * those links again, one into block A, which the first record freed, and no record allocates
     * A since. A ends free, so no table reaches it, but its space may hold what no install record
     * names: a placed value's entry (its writer took the free block whole), or the middle of a
     * block a later record allocated at a lower address once the free space was merged. Redone,
     * the link would overwrite those bytes. It used to be redone, as harmless.
     */
    @Test
    void aLinkIntoABlockTheRecordsLeaveFreeIsNotRedone() {
        assertEquals(List.of(B), List.copyOf(redo(record(NONE, new long[] {A}), record(NONE, NONE, A, B)).keySet()),
                "freed before the link's record");
        assertEquals(List.of(B), List.copyOf(redo(record(new long[] {A}, NONE), record(NONE, new long[] {A}),
                record(NONE, NONE, A, B)).keySet()), "allocated, then freed, before the link's record");
        assertEquals(List.of(A), List.copyOf(redo(record(NONE, new long[] {A}), record(new long[] {A}, NONE),
                record(NONE, NONE, A)).keySet()), "freed, then allocated again before it: redone");
    }

    /**
     * A commit whose record was dropped (a failed log write) is recorded again by the next one,
     * with its allocations, its links (one into the new entry A's next) and the frees of what the
     * changes since unlinked, A among them. The replay redoes a record's allocations before its
     * frees, so A ends free and the link is not redone; kept, it failed the open's check that
     * every link lands in an allocated block, and a consistent store was refused.
     */
    @Test
    void aLinkIntoABlockItsOwnRecordAllocatesAndFreesIsNotRedone() {
        assertEquals(List.of(B), List.copyOf(redo(record(new long[] {A}, new long[] {A}, A, B)).keySet()),
                "allocated and freed by the link's record");
        assertEquals(List.of(B), List.copyOf(redo(record(NONE, new long[] {A}), record(new long[] {A}, new long[] {A}, A, B))
                .keySet()), "freed before, then allocated and freed by the link's record");
        assertEquals(List.of(B, A), List.copyOf(redo(record(new long[] {A}, new long[] {A}, A, B),
                record(new long[] {A}, NONE, A)).keySet()), "allocated again by a later record that links into it");
    }

    /**
     * Before an open writes, each link to redo is checked to land inside a block the records leave
     * allocated, past its header, with room for its 12 bytes. A record whose checksums held but
     * whose link named another place had the open write there (12 bytes into the superblock) or
     * fail untyped after it had begun writing.
     */
    @Test
    void aLinkOutsideAnAllocatedBlockIsRefusedBeforeAnythingIsWritten() {
        org.htod.core.alloc.Heap heap = org.htod.core.alloc.Heap.create(new org.htod.core.device.MemoryDevice(),
                org.htod.core.alloc.HeapOptions.defaults(org.htod.core.container.StorageMethod.PFL, 8192, 1L << 30, 7));
        long block = heap.allocate(ByteBuffer.allocate(100));
        java.util.function.LongPredicate allocated = h -> h == block;
        LoggedOpen.checkLinks(List.of(new InstallRecord.LinkWrite(block, 0, 1, 0)), heap, allocated, "test");
        long size = heap.blockSize(block);
        for (InstallRecord.LinkWrite bad : List.of(
                new InstallRecord.LinkWrite(0, 0, 1, 0), // the container's start: the superblock
                new InstallRecord.LinkWrite(block, (int) size, 1, 0), // past the block's end
                new InstallRecord.LinkWrite(block, -4, 1, 0),
                new InstallRecord.LinkWrite(block + 1, 0, 1, 0))) { // a block the records leave free
            org.junit.jupiter.api.Assertions.assertThrows(org.htod.core.CorruptStoreException.class,
                    () -> LoggedOpen.checkLinks(List.of(bad), heap, allocated, "test"), bad.toString());
        }
    }
}
