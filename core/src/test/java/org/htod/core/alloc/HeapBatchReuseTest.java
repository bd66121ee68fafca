package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import org.htod.core.Seeds;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Steady replacements allocated only in batches, as log mode's flusher allocates entries: the
 * heap must reuse what the replaced blocks give back. OBA places into free blocks of at least
 * {@code T} bytes and otherwise grows the tail, so a flusher replacing blocks of one or two grains
 * never reused them, and the heap of a store holding 53 MB grew past 290 MB (three times its
 * data and more). Batches now take a block of the request's quick list whole before the tail, and
 * past the fragmentation threshold split any free block before it.
 */
class HeapBatchReuseTest {
    private static final int LIVE = 20_000;
    private static final int BATCH = 2_000;
    private static final int ROUNDS = 150;

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void batchesOfReplacementsKeepTheHeapNearWhatItHolds(StorageMethod method) {
        Seeds.run("HeapBatchReuseTest " + method, seed -> replacements(method, seed));
    }

    private static void replacements(StorageMethod method, long seed) {
        MemoryDevice dev = new MemoryDevice();
        HeapOptions opt = HeapFixture.options(method);
        Heap h = Heap.create(dev, opt);
        RecordingJournal journal = new RecordingJournal();
        h.useJournal(journal);
        SplittableRandom r = new SplittableRandom(seed);
        long[] handle = new long[LIVE];
        long[] id = new long[LIVE];
        int[] length = new int[LIVE];
        List<ByteBuffer> first = new ArrayList<>();
        for (int i = 0; i < LIVE; i++) {
            id[i] = i;
            length[i] = 200 + r.nextInt(700); // blocks of one or two grains of 512 bytes
            first.add(HeapFixture.payload(id[i], length[i]));
        }
        System.arraycopy(h.allocateBatch(first), 0, handle, 0, LIVE);
        ByteBuffer snapshot = null;
        long nextId = LIVE;
        for (int round = 0; round < ROUNDS; round++) {
            if (round % 2 == 0) {
                h.sync(); // a checkpoint's sync: blocks freed before it may be reused
            }
            if (round == ROUNDS / 2) {
                snapshot = h.snapshot(); // a checkpoint the log's replay starts from
                journal.clear();
            }
            int[] slots = r.ints(BATCH, 0, LIVE).distinct().toArray();
            List<ByteBuffer> batch = new ArrayList<>();
            for (int s : slots) {
                id[s] = nextId++;
                length[s] = 200 + r.nextInt(700);
                batch.add(HeapFixture.payload(id[s], length[s]));
            }
            long[] got = h.allocateBatch(batch);
            for (int k = 0; k < slots.length; k++) {
                h.free(handle[slots[k]]); // after the batch: the flusher frees once the new entries are in
                handle[slots[k]] = got[k];
            }
        }
        HeapStats s = h.stats();
        String where = method + ": " + s;
        assertEquals(LIVE, s.allocatedBlocks(), where);
        assertTrue(s.usedBytes() <= opt.coalesceThreshold() * s.allocatedBytes(),
                "the heap spans " + s.usedBytes() + " bytes for " + s.allocatedBytes() + " allocated: " + where);
        for (int i = 0; i < LIVE; i += 7) {
            assertEquals(HeapFixture.payload(id[i], length[i]), h.read(handle[i]), "block " + i + ", " + where);
        }
        assertEquals(0, h.verify().leakedBlocks(), where);

        // A crash: the heap comes back from the snapshot and the journal, as log mode's recovery does it.
        Heap back = journal.replayOver(h, snapshot);
        assertEquals(RecordingJournal.allocatedSet(h), RecordingJournal.allocatedSet(back),
                "the replay finds the same blocks; " + where);
    }

    /**
     * Past the fragmentation threshold a batch fills free blocks below {@code T} before it grows
     * the tail: here runs of seven freed grains, merged by a coalesce into blocks of 3.5 KiB, too
     * large for a quick list's whole reuse and too small for OBA's threshold, which values that
     * grow must fill.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void pastTheThresholdBatchesSplitFreeBlocksBeforeTheTail(StorageMethod method) {
        Seeds.run("HeapBatchReuseTest " + method, seed -> pastTheThreshold(method, seed));
    }

    private static void pastTheThreshold(StorageMethod method, long seed) {
        Heap h = Heap.create(new MemoryDevice(), HeapFixture.options(method));
        h.useJournal(new RecordingJournal()); // log mode, as the flusher allocates: the log recovers the heap
        SplittableRandom r = new SplittableRandom(seed);
        List<ByteBuffer> grains = new ArrayList<>();
        for (int i = 0; i < 60_000; i++) {
            grains.add(HeapFixture.payload(i, 100)); // one grain each, side by side
        }
        long[] filler = h.allocateBatch(grains);
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < filler.length; i++) {
            if (i % 8 == 7) {
                live.add(filler[i]);
            } else {
                h.free(filler[i]);
            }
        }
        h.sync();
        h.coalesce();
        long tailBefore = h.tail();
        String where = method.toString();
        assertTrue(Coalescer.overFragmented(h), where + ": " + h.stats());
        assertEquals(0, h.allocateBatch(List.of()).length, "an empty batch, " + where);
        for (int round = 0; round < 10; round++) {
            h.sync(); // a checkpoint's: remainders split off by the round before may be split again
            List<ByteBuffer> batch = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                batch.add(HeapFixture.payload(100_000 + round * 1_000 + i, 200 + r.nextInt(1200)));
            }
            long[] got = h.allocateBatch(batch);
            for (int i = 0; i < got.length; i++) {
                // split down to the request: used whole within the waste, a block of 3.5 KiB
                // would hold one value of a grain or two and leave the rest unused
                assertEquals(h.blockSizeFor(batch.get(i).remaining()), h.blockSize(got[i]), where);
                live.add(got[i]);
            }
        }
        assertEquals(tailBefore, h.tail(), where + ": the batches grew the tail, " + h.stats());
        assertEquals(live.size(), h.stats().allocatedBlocks(), where);
        assertEquals(0, h.verify().leakedBlocks(), where);
    }
    /**
     * Which freed blocks a batch reuses: those on the pages that hold most of them. Here 32 pages
     * with one freed block each, freed first (the oldest: what the batch took before), and 8 pages
     * freed whole; a batch of 64 one-grain entries fills the 8 pages, where the oldest blocks
     * first had it dirty 36 pages, each of which the kernel writes back whole.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aBatchReusesTheBlocksOnTheFewestPages(StorageMethod method) {
        Scattered s = scattered(method, 1L << 40, true);
        assertEquals(s.densePages, pagesOf(s.heap, s.batchOf(0)), "the pages the batch wrote; " + s.where());
        assertEquals(s.tail, s.heap.tail(), s.where());
        assertEquals(0, s.heap.verify().leakedBlocks(), s.where());
    }

    /**
     * The same in direct mode, but for PFL there: its recovery follows the free lists on disk,
     * and a block taken from inside a list can be one a predecessor's pointer skipped to, so a
     * batch there takes the oldest blocks, as before (see {@code BatchAllocator.oldestOfQuickList}).
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void inDirectModeTooButForPfl(StorageMethod method) {
        Scattered s = scattered(method, 1L << 40, false);
        Set<Long> pages = pagesOf(s.heap, s.batchOf(0));
        if (method == StorageMethod.PFL) {
            assertEquals(32 + 4, pages.size(), "the oldest blocks: 32 pages of one, then half the dense ones; " + s.where());
            assertTrue(pages.containsAll(new ArrayList<>(s.densePages).subList(0, 4)), s.where());
        } else {
            assertEquals(s.densePages, pages, "the pages the batch wrote; " + s.where());
        }
        assertEquals(s.tail, s.heap.tail(), s.where());
        assertEquals(0, s.heap.verify().leakedBlocks(), s.where());
    }

    /**
     * A batch that fails after it took its blocks off a quick list (the heap full: here one
     * request more than the freed blocks, and no room at the tail) puts them back: the next batch
     * finds and fills the same pages.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aBatchThatFailsLeavesTheBlocksItChoseFree(StorageMethod method) {
        Scattered s = scattered(method, (FILLER + 16) * 512L, true);
        long free = s.heap.stats().freeBlocks();
        List<ByteBuffer> tooMany = new ArrayList<>();
        for (int i = 0; i < s.densePages.size() * s.perPage + free; i++) {
            tooMany.add(HeapFixture.payload(20_000 + i, 100));
        }
        assertThrows(StoreFullException.class, () -> s.heap.allocateBatch(tooMany), s.where());
        assertEquals(free, s.heap.stats().freeBlocks(), s.where());
        assertEquals(s.densePages, pagesOf(s.heap, s.batchOf(30_000)), "after the failed batch; " + s.where());
        assertEquals(0, s.heap.verify().leakedBlocks(), s.where());
    }

    private static final int FILLER = 1_000;

    /**
     * A heap of {@code FILLER} one-grain blocks (and as many more as fit, if {@code capacity} is
     * small), some freed: one on each of 32 pages, then 8 pages whole; in log mode or direct.
     */
    private record Scattered(Heap heap, Set<Long> densePages, int perPage, long tail, String method) {
        /** Allocates a batch of as many one-grain entries as the dense pages hold, checks them, and returns them. */
        long[] batchOf(int firstId) {
            List<ByteBuffer> batch = new ArrayList<>();
            for (int i = 0; i < densePages.size() * perPage; i++) {
                batch.add(HeapFixture.payload(firstId + i, 100));
            }
            long[] got = heap.allocateBatch(batch);
            for (int i = 0; i < got.length; i++) {
                assertEquals(batch.get(i).rewind(), heap.read(got[i]), "entry " + i + ", " + where());
            }
            return got;
        }

        String where() {
            return method + ": " + heap.stats();
        }
    }

    private static Scattered scattered(StorageMethod method, long capacity, boolean logMode) {
        HeapOptions d = HeapFixture.options(method);
        Heap h = Heap.create(new MemoryDevice(), new HeapOptions(method, d.heapOffset(), capacity, d.storeId(), d.grain(),
                d.maxQuickList(), d.acceptableWaste(), d.obaThreshold(), d.coalesceThreshold()));
        if (logMode) {
            h.useJournal(new RecordingJournal()); // as the flusher allocates
        }
        List<ByteBuffer> grains = new ArrayList<>();
        for (int i = 0; i < FILLER; i++) {
            grains.add(HeapFixture.payload(i, 100)); // one grain of 512 bytes each, side by side
        }
        long[] filler = h.allocateBatch(grains);
        if (capacity < 1L << 40) {
            // a small heap: the tail takes what room is left, so that a batch needing more fails
            try {
                for (int i = 0; i < 64; i++) {
                    h.allocateBatch(List.of(HeapFixture.payload(FILLER + i, 100)));
                }
            } catch (StoreFullException full) {
                // the heap is full
            }
            assertThrows(StoreFullException.class, () -> h.allocateBatch(List.of(HeapFixture.payload(-1, 100))));
        }
        // the pages the filler covers whole, in address order
        TreeMap<Long, List<Long>> byPage = new TreeMap<>();
        for (long f : filler) {
            byPage.computeIfAbsent(h.address(f) / BatchAllocator.PAGE, p -> new ArrayList<>()).add(f);
        }
        int perPage = BatchAllocator.PAGE / h.grain();
        List<List<Long>> whole = new ArrayList<>();
        for (List<Long> blocks : byPage.values()) {
            if (blocks.size() == perPage) {
                whole.add(blocks);
            }
        }
        assertTrue(whole.size() >= 60, whole.size() + " whole pages");
        for (int p = 0; p < 32; p++) {
            h.free(whole.get(p).get(p % perPage)); // one block of each of 32 pages: freed first
        }
        Set<Long> dense = new TreeSet<>();
        for (int p = 40; p < 48; p++) {
            for (long b : whole.get(p)) {
                h.free(b);
            }
            dense.add(h.address(whole.get(p).get(0)) / BatchAllocator.PAGE);
        }
        h.sync(); // the frees durable: their blocks may be reused
        Scattered s = new Scattered(h, dense, perPage, h.tail(), method + (logMode ? ", log mode" : ", direct mode"));
        assertTrue(!Coalescer.overFragmented(h), "no coalescing merges the freed pages' blocks; " + s.where());
        return s;
    }

    private static Set<Long> pagesOf(Heap h, long[] blocks) {
        Set<Long> pages = new TreeSet<>();
        for (long b : blocks) {
            pages.add(h.address(b) / BatchAllocator.PAGE);
        }
        return pages;
    }
}
