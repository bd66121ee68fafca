package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A batch on a full heap (the tail at the end of the region) takes the free space a single
 * allocation would: blocks freed since the last sync, adjacent free blocks merged, and free
 * blocks below the OBA threshold of another size, split.
 */
class HeapFullBatchTest {
    /** 64 KiB of heap, grain 512, maxQL 75, w 2000, T 8 KiB. */
    static HeapOptions small(StorageMethod m) {
        return new HeapOptions(m, HeapFixture.HEAP_OFFSET, 8192 + 64 * 1024, 7, 512, 75, 2000, 8192, 1.5);
    }

    /** Allocates blocks of {@code len} bytes until the heap is full. */
    static List<Long> fill(Heap h, int len) {
        List<Long> blocks = new ArrayList<>();
        try {
            while (true) {
                blocks.add(h.allocate(HeapFixture.payload(blocks.size(), len)));
            }
        } catch (StoreFullException e) {
            return blocks;
        }
    }

    private static void batchFits(Heap h, int... lens) {
        List<ByteBuffer> batch = new ArrayList<>();
        for (int i = 0; i < lens.length; i++) {
            batch.add(HeapFixture.payload(100 + i, lens[i]));
        }
        HeapStats before = h.stats();
        long[] got = h.allocateBatch(batch);
        for (int i = 0; i < lens.length; i++) {
            assertEquals(HeapFixture.payload(100 + i, lens[i]), h.read(got[i]));
        }
        assertEquals(before.allocatedBlocks() + lens.length, h.stats().allocatedBlocks());
    }

    /** Log mode, as the flusher's installs free: the blocks stay unsplittable until a sync, which only an install made. */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aBatchReusesBlocksFreedSinceTheLastSync(StorageMethod m) {
        Heap h = Heap.create(new MemoryDevice(), small(m));
        h.useJournal(new RecordingJournal());
        List<Long> blocks = fill(h, 1000);
        h.sync();
        h.free(blocks.get(1));
        h.free(blocks.get(3));
        batchFits(h, 1000, 1000);
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aBatchMergesAdjacentFreeBlocks(StorageMethod m) {
        Heap h = Heap.create(new MemoryDevice(), small(m));
        List<Long> blocks = fill(h, 1000);
        h.free(blocks.get(4));
        h.free(blocks.get(5));
        h.sync();
        batchFits(h, 2000);
        h.verify();
        Heap back = HeapFixture.reopenClean(h, h.device());
        assertEquals(back.stats().freeBytes(), back.verify().freeBytes());
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aBatchSplitsAFreeBlockBelowTheThreshold(StorageMethod m) {
        Heap h = Heap.create(new MemoryDevice(), small(m));
        List<Long> blocks = fill(h, 3000); // blocks of 3584 bytes, below T
        h.free(blocks.get(2));
        h.sync();
        batchFits(h, 1000, 1000); // two of 1536: 3072 of the 3584 free
        h.verify();
    }
}
