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
 * describes, which the open's scan of every header fills. These are the cases {@code
 * HeapCrashTest} found at 100 times its default length.
 */
class HeapListsRecoveryTest {

    /**
     * PFL: a free whose list begins with a block defined since the last sync writes a next
     * pointer that skips it (a crash could keep this write and lose that block's), and a clean
     * close writes it again in list order, since a snapshot rebuilds the pointers from list order
     * and the lists' next relink writes only the pointers it changes. After the reopen every free
     * block's pointer on disk is the one memory holds.
     */
    @org.junit.jupiter.api.Test
    void aFreeNamesNoBlockDefinedSinceTheLastSyncAndACleanCloseLinksItInListOrder() {
        MemoryDevice disk = new MemoryDevice();
        HeapOptions opt = HeapFixture.options(StorageMethod.PFL);
        Heap h = Heap.create(disk, opt);
        long[] durable = new long[6];
        for (int i = 0; i < durable.length; i++) {
            durable[i] = h.allocate(HeapFixture.payload(i, 4000));
        }
        h.sync();
        long fresh = h.allocate(HeapFixture.payload(10, 4000)); // at the tail: defined since the sync
        h.free(durable[1]);
        h.free(fresh); // its list now begins with a block defined since the sync
        h.free(durable[3]);
        assertEquals(h.address(durable[1]), nextOnDisk(disk, h.address(durable[3])),
                "the pointer skips the block defined since the sync");
        assertEquals(h.address(durable[1]), nextOnDisk(disk, h.address(fresh)),
                "a block defined since the sync may name its successor: its stamp stops recovery there");
        Heap.SnapshotRef ref = h.shutdown();
        assertEquals(h.address(fresh), nextOnDisk(disk, h.address(durable[3])), "the clean close linked it in list order");
        Heap back = Heap.open(disk, opt, ref);
        assertEquals("snapshot", back.recoveryReport().path());
        int free = 0;
        for (FreeBlock b : back.lists.all()) {
            assertEquals(b.next, nextOnDisk(disk, b.addr), "block at " + b.addr);
            free++;
        }
        assertEquals(3, free);
        back.verify();
        back.close();
    }

    private static long nextOnDisk(MemoryDevice disk, long addr) {
        ByteBuffer b = ByteBuffer.allocate(8);
        disk.read(addr + BlockHeader.NEXT_OFFSET, b);
        return b.getLong(0);
    }

    /**
     * The open that recovers by the lists rebuilds the free lists from a scan of every header,
     * which applies the remainder rule to every block: the remainder the tear lost is written back
     * and is free space at once, so that x's note, the only record of that space until then, may
     * be rewritten by the next split of x's block; and a clean close needs no coalescing. PL's
     * lists reached x but not the remainder, pushed on a head no durable checkpoint names, and
     * only a split of x checked the note; PFL's reached neither.
     */
    @ParameterizedTest
    @EnumSource(names = {"PL", "PFL"})
    void aRecoveryByListsRebuildsTheRemainderATornSplitLostAtOpen(StorageMethod method) {
        MemoryDevice disk = new MemoryDevice();
        HeapOptions opt = HeapFixture.options(method, 64, 4, 0, 1 << 20);
        long[] xAndAfter = tornSplit(disk, opt);
        long x = xAndAfter[0];
        Heap back = Heap.open(disk, opt, null);
        assertEquals("lists", back.report.path(), back.report.toString());
        assertEquals(1, back.report.headersRepaired(), back.report.toString());
        long r = back.address(x) + back.blockSize(x);
        BlockHeader there = back.headerAt(r);
        assertNotNull(there, "the remainder's header is written back at open");
        assertTrue(!there.allocated && there.size == 3072, "a free block of 3072 bytes");
        assertEquals(0, back.verify().leakedBlocks());
        assertEquals(3072, back.stats().freeBytes(), "the remainder is the one free block");
        long coalesces = back.coalesces;
        Heap.SnapshotRef ref = back.shutdown();
        assertEquals(coalesces, back.coalesces, "nothing left for a clean close to check");
        Heap again = Heap.open(disk, opt, ref);
        assertEquals(HeapFixture.payload(3, 7040 - BlockHeader.SIZE), again.read(x));
        assertEquals(HeapFixture.payload(2, 100), again.read(xAndAfter[1]));
        assertEquals(0, again.verify().leakedBlocks());

        again.free(x); // x was in flight: the application frees it, and asks for a smaller block
        long y = again.allocate(HeapFixture.payload(4, 5120 - BlockHeader.SIZE));
        assertEquals(again.address(x), again.address(y), "x's block was split again, rewriting its header and note");
        again.coalesce(); // a scan from the first block: it must cross what the torn split left
        assertEquals(0, again.verify().leakedBlocks());
        assertEquals(HeapFixture.payload(2, 100), again.read(xAndAfter[1]));
        assertEquals(HeapFixture.payload(4, 5120 - BlockHeader.SIZE), again.read(y));
        again.close();
    }

    /**
     * PFL: a chain must not be followed through an allocated block. Here X was taken off its free
     * list (a status write: its header keeps the old next pointer, to Q), then a coalescing merged
     * Q into the block before it, and X's pointer now names a header inside free space, stale but
     * valid. After the coalescing X is freed (its pointer rewritten) and H pushed on it; the power
     * fails with H's write landed and X's lost: the checkpointed chain reaches X, allocated on
     * disk, and behind it the stale Q, which survives because the write that reused the merged
     * block was torn. Taken for a free block, Q would be handed out inside the merged block,
     * allocated on disk by then. (HeapCrashTest's seed 0x4ea9c0de02d6 at 100 times its length.)
     */
    @org.junit.jupiter.api.Test
    void aPflChainStopsAtAnAllocatedBlockWhosePointerACoalescingLeftStale() {
        MemoryDevice disk = new MemoryDevice();
        // Quick lists to 2560 bytes; batches reuse blocks of 1024 and more whole within 2200 bytes.
        HeapOptions opt = HeapFixture.options(StorageMethod.PFL, 64, 40, 2200, 1024);
        Heap h = Heap.create(disk, opt);
        int two = 2048 - BlockHeader.SIZE;
        long hb = h.allocate(HeapFixture.payload(1, two));
        long x = h.allocate(HeapFixture.payload(2, two));
        long z = h.allocate(HeapFixture.payload(3, 1024 - BlockHeader.SIZE));
        long q = h.allocate(HeapFixture.payload(4, two));
        long g = h.allocate(HeapFixture.payload(5, 100));
        h.free(q);
        h.free(x); // x's next pointer: q
        assertEquals(x, h.allocate(HeapFixture.payload(6, two)), "x taken whole off its list, by a status write");
        h.free(z);
        h.free(hb);
        h.coalesce(); // z and q merge into one block of 3072 at z; h alone heads the 2048 list; all durable

        Recorder rec = new Recorder(disk);
        Heap live = Heap.open(rec, opt, null); // the same heap state, continued through a recorder
        rec.writes.clear();
        rec.data.clear();
        byte[] durable = image(disk); // what a sync would have made durable: the open syncs
        assertEquals(hb, live.allocate(HeapFixture.payload(7, two)), "h taken whole");
        long zq = live.allocateBatch(java.util.List.of(HeapFixture.payload(8, 900)))[0]; // the merged block, whole
        int torn = rec.writes.size() - 1;
        assertEquals(live.address(z), live.address(zq), "the merged block reused whole");
        assertEquals(3072, live.blockSize(zq));
        live.free(x); // lost in the crash below
        int lost = rec.writes.size() - 1;
        assertEquals(live.address(x) + BlockHeader.NEXT_OFFSET, rec.writes.get(lost)[0], "the free of x is one write");
        live.free(hb); // h's next pointer: x

        // The power fails: x's free is lost, and the batch's write is torn, the sector holding
        // q's old header left as it was (a tear keeps whole sectors, old or new).
        MemoryDevice after = new MemoryDevice();
        after.write(0, java.nio.ByteBuffer.wrap(durable));
        for (int i = 0; i < rec.writes.size(); i++) {
            if (i != lost) {
                long[] w = rec.writes.get(i);
                after.write(w[0], java.nio.ByteBuffer.wrap(rec.data.get(i)));
            }
        }
        int sector = (int) (live.address(q) / 512 * 512);
        assertTrue(rec.writes.get(torn)[0] < sector, "the batch's write covers q's old header");
        after.write(sector, java.nio.ByteBuffer.wrap(durable, sector, 512));
        Heap back = Heap.open(after, opt, null);
        back.verify(); // a free block inside the merged one would fail here
        assertEquals(HeapFixture.payload(8, 900), back.read(zq));
        assertEquals(HeapFixture.payload(5, 100), back.read(g));
        java.util.Set<Long> allocated = new java.util.HashSet<>();
        back.forEachAllocated((handle, len) -> allocated.add(handle));
        assertTrue(allocated.contains(zq) && allocated.contains(g) && allocated.contains(x));
    }

    private static byte[] image(MemoryDevice d) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(Math.toIntExact(d.size()));
        d.read(0, b);
        return b.array();
    }

    /** Passes writes through and keeps each one's place and bytes, in order. */
    private static final class Recorder extends org.htod.core.device.ForwardingDevice {
        final java.util.List<long[]> writes = new java.util.ArrayList<>();
        final java.util.List<byte[]> data = new java.util.ArrayList<>();

        Recorder(org.htod.core.device.BlockDevice inner) {
            super(inner);
        }

        @Override
        public void write(long pos, java.nio.ByteBuffer src) {
            byte[] b = new byte[src.remaining()];
            src.duplicate().get(b);
            writes.add(new long[] {pos});
            data.add(b);

            super.write(pos, src);
        }
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

    /**
     * PFL: blocks freed just before a clean close, then a clean open, a sync, and a crash:
     * recovery by the lists finds them. The clean open trusted the snapshot and left the tail
     * checkpoint as the close found it, its heads older than those frees, until a head changed
     * again; a crash before that left the freed blocks on no list recovery follows, and below the
     * checkpoint's tail, which its walk starts from (leaked until a coalescing).
     */
    @org.junit.jupiter.api.Test
    void blocksFreedBeforeACleanCloseSurviveACrashAfterTheNextOpensFirstSync() {
        MemoryDevice disk = new MemoryDevice();
        Heap h = Heap.create(disk, HeapFixture.options(StorageMethod.PFL));
        long[] ids = new long[9];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = h.allocate(HeapFixture.payload(i, 4000));
        }
        h.free(ids[8]); // a head changes: the sync writes a checkpoint, its tail past every block
        h.sync();
        h.sync(); // that checkpoint durable
        for (int i = 0; i < 8; i += 2) {
            h.free(ids[i]);
        }
        Heap back = HeapFixture.reopenClean(h, disk);
        long big = back.allocate(HeapFixture.payload(20, 20_000)); // at the tail: no head changes
        back.sync();
        Heap again = HeapFixture.reopenRecovering(back, disk);
        assertEquals("lists", again.recoveryReport().path());
        assertEquals(0, again.verify().leakedBlocks(), "the blocks freed before the clean close are found: "
                + again.recoveryReport());
        assertEquals(HeapFixture.payload(20, 20_000), again.read(big));
        again.close();
    }

    /**
     * PFL: a free whose list begins with a block defined since the last sync writes a pointer that
     * skips it; a block later taken from the middle of that list has its in-memory predecessor (the
     * skipped block) rewritten, not the block whose pointer on disk names it. That pointer then
     * named an allocated block for good, and every crash since lost the skipped block and every
     * block behind it on the list (leaked until a coalescing): here, syncs and all, a crash after
     * three rounds of them. The pointers that skip are written again, in list order, at the next
     * sync.
     */
    @org.junit.jupiter.api.Test
    void aPointerThatSkippedABlockIsWrittenAgainAtTheNextSync() {
        MemoryDevice disk = new MemoryDevice();
        Heap h = Heap.create(disk, HeapFixture.options(StorageMethod.PFL));
        int grain = h.opt.grain();
        java.util.function.IntFunction<ByteBuffer> grains = g -> HeapFixture.payload(g, g * grain - BlockHeader.SIZE);
        long e = h.allocate(grains.apply(100));
        h.allocate(grains.apply(1)); // keeps the blocks apart
        long d = h.allocate(grains.apply(90));
        h.allocate(grains.apply(1));
        long b = h.allocate(grains.apply(215));
        h.allocate(grains.apply(1));
        long p = h.allocate(grains.apply(110));
        h.allocate(grains.apply(1));
        h.free(e);
        h.free(d);
        h.free(b);
        h.sync();
        h.sync();
        h.allocateBatch(java.util.List.of(grains.apply(120))); // splits b: a remainder defined since the sync
        h.free(p); // its pointer skips the remainder
        h.sync();
        h.sync();
        long taken = h.allocate(grains.apply(90)); // d, from the middle of the list
        assertEquals(h.address(d), h.address(taken), "the block from the middle of the list");
        h.sync();
        h.sync();
        Heap back = HeapFixture.reopenRecovering(h, disk);
        assertEquals(0, back.verify().leakedBlocks(), "every free block found: " + back.recoveryReport());
        back.close();
    }
}
