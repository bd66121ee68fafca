package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.junit.jupiter.api.Test;

/**
 * PL in direct mode after power loss: the free space the recovered heap knows (its free lists and
 * the tail) accounts for every block that is free on disk. Its disk lists alone did not: a split's
 * remainder is pushed on the head of its list, which only the next tail checkpoint names, so a
 * crash before that checkpoint was durable left it on no list the open followed; and a coalescing
 * cut short left a durable checkpoint whose lists are all empty, so that every free block below its
 * tail was on none. The open now rebuilds the free lists from a scan of every header, the one the
 * layers above make to find leaked blocks if they made it, else its own. The random runs are
 * {@link HeapPflCrashLeakTest}'s, for PL.
 */
class HeapPlCrashLeakTest {
    /** Grain 64, four quick lists, no acceptable waste: one misc list holds 5120..10239 bytes. */
    private static HeapOptions options() {
        return HeapFixture.options(StorageMethod.PL, 64, 4, 0, 1 << 20);
    }

    /**
     * A free block split after the checkpoint naming its list became durable: the sync after the
     * split makes the remainder's header durable and writes a checkpoint naming it as its list's
     * head, which the power cut drops.
     */
    @Test
    void aRemainderSplitOffSinceTheDurableCheckpointIsFreeAfterACrash() {
        MemoryDevice platter = new MemoryDevice();
        CrashDevice dev = new CrashDevice(platter);
        Heap h = Heap.create(dev, options());
        long big = h.allocate(HeapFixture.payload(1, 10112 - BlockHeader.SIZE));
        long after = h.allocate(HeapFixture.payload(2, 100));
        h.free(big);
        h.sync();
        h.sync(); // the checkpoint naming the free block is durable
        long x = h.allocate(HeapFixture.payload(3, 7040 - BlockHeader.SIZE));
        assertEquals(h.address(big), h.address(x), "split off the free block");
        long remainder = h.address(x) + 7040;
        h.sync(); // the split durable; the checkpoint naming its remainder written, not yet durable
        dev.crashKeeping(at -> false);

        Heap back = Heap.open(platter, options(), null);
        assertEquals("lists", back.recoveryReport().path());
        HeapVerifyReport v = back.verify();
        assertEquals(0, v.leakedBlocks(), "the remainder behind x is free: " + v);
        assertEquals(1, back.stats().freeBlocks(), back.recoveryReport().toString());
        assertEquals(3072, back.stats().freeBytes());
        long y = back.allocate(HeapFixture.payload(4, 3072 - BlockHeader.SIZE));
        assertEquals(remainder, back.address(y), "the remainder, handed out whole");
        assertEquals(HeapFixture.payload(3, 7040 - BlockHeader.SIZE), back.read(x));
        assertEquals(HeapFixture.payload(2, 100), back.read(after));
        back.close();
    }

    /**
     * A coalescing makes a checkpoint with empty lists durable before it merges, then relinks
     * every block and checkpoints the new heads: the power fails while it relinks, and the durable
     * checkpoint names no list. The merged block and the blocks left alone are free on disk.
     */
    @Test
    void aCoalescingCutShortLosesNoFreeBlock() {
        MemoryDevice platter = new MemoryDevice();
        CrashDevice dev = new CrashDevice(platter);
        HeapOptions opt = HeapFixture.options(StorageMethod.PL);
        Heap h = Heap.create(dev, opt);
        long[] b = new long[8];
        for (int i = 0; i < b.length; i++) {
            b[i] = h.allocate(HeapFixture.payload(i, 4000));
        }
        h.free(b[1]);
        h.free(b[2]); // merged with b1
        h.free(b[4]);
        h.free(b[6]);
        h.sync();
        h.sync();
        // The empty checkpoint, the merged header, then the relink's first header write.
        dev.armCrashAfterWrites(3);
        assertThrows(SimulatedCrashException.class, h::coalesce);
        dev.crashKeeping(at -> false);

        Heap back = Heap.open(platter, opt, null);
        assertEquals("lists", back.recoveryReport().path());
        HeapVerifyReport v = back.verify();
        assertEquals(0, v.leakedBlocks(), "b1 and b2 merged, b4 and b6 are free: " + v);
        assertEquals(3, back.stats().freeBlocks(), back.recoveryReport().toString());
        Set<Long> allocated = new HashSet<>();
        back.forEachAllocated((handle, len) -> allocated.add(handle));
        assertEquals(Set.of(b[0], b[3], b[5], b[7]), allocated);
        for (int i : new int[] {0, 3, 5, 7}) {
            assertEquals(HeapFixture.payload(i, 4000), back.read(b[i]));
        }
        back.close();
    }

    /**
     * A coalescing's relinking rewrites every header, then writes the checkpoint naming the new
     * heads, and the power fails at the sync that would make them durable: the crash keeps the
     * checkpoint and all but two of the relinking's writes. The lists then follow an old pointer
     * into a header the merge swallowed, free and of the right list, and no list reaches the block
     * that swallowed it. Only a header the scan meets may be believed: the merged block is free,
     * and the swallowed header is no block at all (taken for one, it would be handed out inside a
     * free block that a later scan hands out again).
     */
    @Test
    void aPointerTheRelinkingLeftStaleNamesNoFreeBlock() {
        MemoryDevice platter = new MemoryDevice();
        CrashDevice dev = new CrashDevice(platter);
        HeapOptions opt = HeapFixture.options(StorageMethod.PL); // grain 512: one quick list a size
        Heap h = Heap.create(dev, opt);
        int[] sizes = {1024, 2048, 1024, 1024, 1024, 3072, 1024};
        long[] b = new long[sizes.length];
        for (int i = 0; i < b.length; i++) {
            b[i] = h.allocate(HeapFixture.payload(i, sizes[i] - BlockHeader.SIZE));
        }
        // The 1024 list: b6, b4, b3, b2, b0 (b3's pointer names b2); b1 and b5 alone on theirs.
        h.free(b[1]);
        h.free(b[2]); // merged into b1's block, of 3072 bytes, relinked on b5's list
        h.sync();
        h.sync();
        // Sync; the empty checkpoint; sync; the merged header; sync; six headers relinked (b0, the
        // merged block, b3, b4, b5, b6); the checkpoint naming b6 and b5 as heads; the cut sync.
        dev.armPowerCut(13, CrashDevice.Counting.WRITES_AND_SYNCS, CrashDevice.CutWrite.LOST);
        assertThrows(SimulatedCrashException.class, h::coalesce);
        assertTrue(dev.cutAtSync(), "the power failed at the coalescing's last sync");
        long b3 = h.address(b[3]);
        long b5 = h.address(b[5]);
        dev.crashKeeping(at -> at != b3 && at != b5); // b3 still names b2; b5 names nothing

        Heap back = Heap.open(platter, opt, null);
        assertEquals("lists", back.recoveryReport().path(), back.recoveryReport().toString());
        HeapVerifyReport v = back.verify();
        assertEquals(0, v.leakedBlocks(), v.toString());
        assertEquals(1, back.stats().freeBlocks(), "the merged block alone");
        assertEquals(3072, back.stats().freeBytes());
        long y = back.allocate(HeapFixture.payload(100, 3072 - BlockHeader.SIZE));
        assertEquals(h.address(b[1]), back.address(y), "the merged block, handed out whole");
        for (int i : new int[] {0, 3, 4, 5, 6}) {
            assertEquals(HeapFixture.payload(i, sizes[i] - BlockHeader.SIZE), back.read(b[i]));
        }
        back.coalesce();
        assertEquals(0, back.verify().leakedBlocks());
        back.close();
    }

    /**
     * The layers above scan every allocated block before the open finishes (a table's recovery
     * looks for leaks so): that scan's free blocks are kept, and the open finishes without reading
     * a header again.
     */
    @Test
    void aSweepBeforeTheOpenFinishesSparesTheRebuildItsOwnScan() {
        MemoryDevice platter = new MemoryDevice();
        CrashDevice dev = new CrashDevice(platter);
        HeapOptions opt = options();
        Heap h = Heap.create(dev, opt);
        long[] b = new long[20];
        for (int i = 0; i < b.length; i++) {
            b[i] = h.allocate(HeapFixture.payload(i, 10112 - BlockHeader.SIZE));
        }
        for (int i = 0; i < b.length; i += 2) {
            h.free(b[i]);
        }
        h.sync();
        h.sync();
        for (int i = 0; i < 6; i++) {
            h.allocate(HeapFixture.payload(100 + i, 7040 - BlockHeader.SIZE)); // six splits
        }
        h.sync();
        dev.crashKeeping(at -> false);

        CountingDevice counting = new CountingDevice(platter);
        Heap back = Heap.prepare(counting, opt, null);
        long[] swept = {0};
        back.forEachAllocated((handle, len) -> swept[0]++);
        long before = counting.counts().bytesRead();
        back.finishOpen();
        assertEquals(before, counting.counts().bytesRead(), "the open finished without reading");
        HeapVerifyReport v = back.verify();
        assertEquals(0, v.leakedBlocks(), v.toString());
        assertEquals(4 + 6, back.stats().freeBlocks(), "four blocks whole, six remainders: " + back.recoveryReport());
        assertEquals(swept[0], back.stats().allocatedBlocks(), "the counters are the scan's");
        assertTrue(back.recoveryReport().headersRead() > 0);
        back.close();
    }
}
