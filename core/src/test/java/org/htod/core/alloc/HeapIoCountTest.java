package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.WriteLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The core paper's I/O claims, one test each, counted through {@link CountingDevice}. */
class HeapIoCountTest {

    private final CountingDevice dev = new CountingDevice(new MemoryDevice());

    private Heap heap(StorageMethod m) {
        return Heap.create(dev, HeapFixture.options(m));
    }

    private long writesDuring(Runnable op) {
        dev.reset();
        op.run();
        assertEquals(0, dev.counts().reads(), "no reads expected");
        return dev.counts().writes();
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void anAllocationFromTheTailIsOneWrite(StorageMethod m) {
        Heap h = heap(m);
        assertEquals(1, writesDuring(() -> h.allocate(HeapFixture.payload(1, 3000))), "paper Fig. 7");
        assertEquals(1, writesDuring(() -> h.allocate(HeapFixture.payload(2, 100_000))), "paper Fig. 7, a large block");
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void anAllocationFromAQuickListIsOneWrite(StorageMethod m) {
        Heap h = heap(m);
        long a = h.allocate(HeapFixture.payload(1, 1000));
        h.allocate(HeapFixture.payload(2, 1000));
        h.free(a);
        h.sync();
        assertEquals(1, writesDuring(() -> h.allocate(HeapFixture.payload(3, 1000))), "§2.1, 2.2, 2.3: set AS, write data");
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFreeIsOneWrite(StorageMethod m) {
        Heap h = heap(m);
        long a = h.allocate(HeapFixture.payload(1, 5000));
        h.allocate(HeapFixture.payload(2, 10));
        assertEquals(1, writesDuring(() -> h.free(a)), "§2.1 TS / §2.2 PL: flip AS; §2.3 PFL: AS and next in one write");
    }

    @ParameterizedTest
    @EnumSource(value = StorageMethod.class, names = {"TS", "PFL"})
    void splittingAFreeBlockIsOneWrite(StorageMethod m) {
        Heap h = heap(m);
        // 150 KB and 100 KB fall on the same misc list, so PMFLF splits before it turns to the tail.
        long big = h.allocate(HeapFixture.payload(1, 150_000));
        h.allocate(HeapFixture.payload(2, 10));
        h.free(big);
        h.sync();
        long[] got = new long[1];
        assertEquals(1, writesDuring(() -> got[0] = h.allocate(HeapFixture.payload(3, 100_000))),
                "the allocated part and the remainder's header go in one write");
        assertEquals(h.address(big), h.address(got[0]), "the free block was split, not the tail used");
    }

    @Test
    void aPlSplitReadsTheHeaderOnceAndWritesOnce() {
        Heap h = heap(StorageMethod.PL);
        long big = h.allocate(HeapFixture.payload(1, 150_000));
        h.allocate(HeapFixture.payload(2, 10));
        h.free(big);
        h.sync();
        dev.reset();
        h.allocate(HeapFixture.payload(3, 100_000));
        assertEquals(1, dev.counts().reads(), "PL keeps the block on its disk list, so the split needs its link (§2.2)");
        assertEquals(1, dev.counts().writes());
    }

    @Test
    void pflTakingABlockFromTheMiddleOfAFreeListRewritesItsPredecessor() {
        Heap h = heap(StorageMethod.PFL);
        // Two free blocks on the same misc list; best fit picks the older, which sits behind the newer.
        long bigger = h.allocate(HeapFixture.payload(1, 60_000));
        h.allocate(HeapFixture.payload(2, 10));
        long smaller = h.allocate(HeapFixture.payload(3, 50_000));
        h.allocate(HeapFixture.payload(4, 10));
        h.free(smaller);
        h.free(bigger);
        h.sync();
        assertEquals(2, writesDuring(() -> h.allocate(HeapFixture.payload(5, 50_000))),
                "§2.3: the disk free list changes, the predecessor's next pointer with it");
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aSyncWritesAtMostOneCheckpoint(StorageMethod m) {
        Heap h = heap(m);
        for (int i = 0; i < 10; i++) {
            h.allocate(HeapFixture.payload(i, 700));
        }
        dev.reset();
        h.sync();
        long expected = m == StorageMethod.PL ? 1 : 0;
        assertEquals(expected, dev.counts().writes(),
                "TS checkpoints the tail rarely; PL pushed the new blocks on its disk lists, so it writes the heads (DLH);"
                        + " PFL's free lists did not change");
        assertEquals(1, dev.counts().syncs());
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void obaWritesABatchAtTheTailInOneWrite(StorageMethod m) {
        WriteLog log = new WriteLog(dev);
        Heap h = Heap.create(log, HeapFixture.options(m));
        List<ByteBuffer> batch = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            batch.add(HeapFixture.payload(i, 300 + 97 * i));
        }
        log.writes.clear();
        h.allocateBatch(batch);
        assertEquals(1, log.writes.size(), "20 adjacent blocks, one write (§2.5)");
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void obaFillsFreeBlocksBestFitAndWritesInAscendingAddressOrder(StorageMethod m) {
        WriteLog log = new WriteLog(dev);
        Heap h = Heap.create(log, HeapFixture.options(m));
        // Free blocks of 40 KB separated by live ones: each takes a few of the batch's objects.
        List<Long> holes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            holes.add(h.allocate(HeapFixture.payload(i, 40_000)));
            h.allocate(HeapFixture.payload(100 + i, 10));
        }
        for (long hole : holes) {
            h.free(hole);
        }
        h.sync();
        List<ByteBuffer> batch = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            batch.add(HeapFixture.payload(1000 + i, 6000 + 50 * i));
        }
        long tailBefore = h.tail();
        log.writes.clear();
        long[] handles = h.allocateBatch(batch);
        int n = log.writes.size();
        assertTrue(n < batch.size(), n + " writes for " + batch.size() + " objects");
        for (int i = 1; i < n; i++) {
            assertTrue(log.writes.get(i)[0] > log.writes.get(i - 1)[0], "writes in ascending address order");
        }
        int inHoles = 0;
        for (long handle : handles) {
            if (h.address(handle) < tailBefore) {
                inHoles++;
            }
        }
        assertTrue(inHoles >= 18, "best fit placed " + inHoles + " of 30 objects into the free blocks");
        for (int i = 0; i < handles.length; i++) {
            assertEquals(HeapFixture.payload(1000 + i, 6000 + 50 * i), h.read(handles[i]));
        }
        h.verify();
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aCleanReopenOfAMillionBlocksReadsTheSnapshotNotTheHeap(StorageMethod m) {
        Heap h = Heap.create(dev, HeapFixture.options(m, 64, 75, 0, 8192));
        List<ByteBuffer> batch = new ArrayList<>();
        ByteBuffer small = ByteBuffer.allocate(8);
        for (int i = 0; i < 1_000_000; i++) {
            batch.add(small.duplicate());
            if (batch.size() == 10_000) {
                long[] got = h.allocateBatch(batch);
                for (int k = 0; k < got.length; k += 7) {
                    h.free(got[k]);
                }
                batch.clear();
            }
        }
        long heapBytes = h.tail() - h.firstBlock();
        Heap.SnapshotRef ref = h.shutdown();
        dev.reset();
        Heap again = Heap.open(dev, h.opt, ref);
        assertEquals("snapshot", again.recoveryReport().path());
        long read = dev.counts().bytesRead();
        assertTrue(read < heapBytes / 20, "read " + read + " bytes of a " + heapBytes + "-byte heap");
        assertEquals(h.stats().freeBlocks(), again.stats().freeBlocks());
        assertEquals(1_000_000 - 1429 * 100, again.stats().allocatedBlocks());
    }
}
