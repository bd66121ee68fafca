package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * PFL in direct mode after power loss: the free space the recovered heap knows (its free lists and
 * the tail) accounts for every block that is not allocated on disk. Its disk lists alone did not:
 * a list whose head was taken after the last durable tail checkpoint was cut there (the head is
 * allocated, and an allocated block's next pointer is not followed), and a block freed after it
 * was on no list the checkpoint names. The open now rebuilds the free lists from a scan of every
 * header, the one the layers above make to find leaked blocks if they made it, else its own.
 */
class HeapPflCrashLeakTest {
    private static final int RUNS = 12 * Integer.getInteger("htod.test.scale", 1);
    private static final long FIRST_SEED = 0x9F1_0000L;
    private static final int SIZE = 4000;

    /**
     * A list's head taken after the tail checkpoint that names it became durable: the sync after
     * the allocation makes it durable and writes a checkpoint with the new head, which the power
     * cut drops. The durable checkpoint still names the head, allocated now.
     */
    @Test
    void aHeadTakenSinceTheDurableCheckpointDoesNotCutItsList() {
        MemoryDevice platter = new MemoryDevice();
        CrashDevice dev = new CrashDevice(platter);
        HeapOptions opt = HeapFixture.options(StorageMethod.PFL);
        Heap h = Heap.create(dev, opt);
        long[] b = new long[8];
        for (int i = 0; i < b.length; i++) {
            b[i] = h.allocate(HeapFixture.payload(i, SIZE));
        }
        h.sync();
        for (int i = 1; i < 7; i++) {
            h.free(b[i]); // one list: b6, b5, ..., b1
        }
        h.sync();
        h.sync(); // the checkpoint naming b6 as the head is durable
        long taken = h.allocate(HeapFixture.payload(100, SIZE));
        assertEquals(b[6], taken, "the head, taken whole");
        h.sync(); // the allocation durable; the checkpoint naming b5 written, not yet durable
        dev.crashKeeping(at -> false);

        Heap back = Heap.open(platter, opt, null);
        assertEquals("lists", back.recoveryReport().path());
        HeapVerifyReport v = back.verify();
        assertEquals(0, v.leakedBlocks(), "b5..b1, behind the allocated head, are free: " + v);
        assertEquals(5, back.stats().freeBlocks(), back.recoveryReport().toString());
        assertEquals(HeapFixture.payload(100, SIZE), back.read(taken));
        Set<Long> handedOut = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            handedOut.add(back.allocate(HeapFixture.payload(200 + i, SIZE)));
        }
        assertEquals(Set.of(b[1], b[2], b[3], b[4], b[5]), handedOut, "the five free blocks, and no other");
        assertEquals(HeapFixture.payload(100, SIZE), back.read(taken));
        assertEquals(HeapFixture.payload(0, SIZE), back.read(b[0]));
        assertEquals(HeapFixture.payload(7, SIZE), back.read(b[7]));
        back.close();
    }

    /**
     * Blocks freed after the durable checkpoint, their frees made durable by a sync whose
     * checkpoint (naming them) the power cut drops; and one more freed after that sync, its free
     * lost: it stays allocated on disk, since nothing proves it free (a table's recovery frees it
     * if nothing reaches it).
     */
    @Test
    void blocksFreedSinceTheDurableCheckpointAreFreeAfterACrash() {
        MemoryDevice platter = new MemoryDevice();
        CrashDevice dev = new CrashDevice(platter);
        HeapOptions opt = HeapFixture.options(StorageMethod.PFL);
        Heap h = Heap.create(dev, opt);
        long[] b = new long[9];
        for (int i = 0; i < b.length; i++) {
            b[i] = h.allocate(HeapFixture.payload(i, SIZE + 600 * (i % 3)));
        }
        h.free(b[8]); // a head changes: the sync writes a checkpoint, its tail past every block
        h.sync();
        h.sync(); // that checkpoint durable: the walk past its tail finds none of the blocks below
        for (int i = 0; i < 6; i += 2) {
            h.free(b[i]);
        }
        h.sync(); // the frees durable; the checkpoint naming them written, not yet durable
        h.free(b[7]); // lost in the crash
        dev.crashKeeping(at -> false);

        Heap back = Heap.open(platter, opt, null);
        HeapVerifyReport v = back.verify();
        assertEquals(0, v.leakedBlocks(), "b0, b2 and b4 were freed and the frees are durable: " + v);
        assertEquals(4, back.stats().freeBlocks(), "b0, b2, b4 and b8: " + back.recoveryReport());
        Set<Long> allocated = new HashSet<>();
        back.forEachAllocated((handle, len) -> allocated.add(handle));
        assertEquals(Set.of(b[1], b[3], b[5], b[6], b[7]), allocated, "b7's free never reached the disk");
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
        HeapOptions opt = HeapFixture.options(StorageMethod.PFL);
        Heap h = Heap.create(dev, opt);
        long[] b = new long[40];
        for (int i = 0; i < b.length; i++) {
            b[i] = h.allocate(HeapFixture.payload(i, SIZE));
        }
        h.sync();
        for (int i = 0; i < b.length; i += 2) {
            h.free(b[i]);
        }
        h.sync();
        h.sync();
        h.allocate(HeapFixture.payload(100, SIZE)); // takes the head
        for (int i = 1; i < 10; i += 2) {
            h.free(b[i]); // freed since the checkpoint
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
        assertEquals(19 + 5, back.stats().freeBlocks(), back.recoveryReport().toString());
        assertEquals(swept[0], back.stats().allocatedBlocks(), "the counters are the scan's");
        back.close();
    }

    /**
     * Random operations on PFL heaps, and on PL heaps ({@link HeapPlCrashLeakTest}: a remainder
     * split off since the durable checkpoint, or every block below the tail of one a coalescing
     * cut short wrote with empty lists, was on no list), until the power fails at a random write;
     * a seeded subset of
     * the unsynced writes survives, one of them torn. After each recovery (half of them with a
     * sweep of the allocated blocks before the open finishes, as a table's recovery makes): every
     * synced block is whole (see {@link CrashModel}); the free lists, the allocated blocks on disk
     * and nothing else make up the heap below the tail; every block freed before the last sync
     * (not reused since) is free; and the allocations that follow never land on a live block.
     */
    @ParameterizedTest
    @EnumSource(value = StorageMethod.class, names = {"PL", "PFL"})
    void freeSpaceAccountsForEveryBlockNotAllocatedAsOfTheCrash(StorageMethod method) {
        for (int i = 0; i < RUNS; i++) {
            long seed = FIRST_SEED + i;
            try {
                run(method, seed);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed=0x" + Long.toHexString(seed) + " (" + method + "): " + e, e);
            }
        }
    }

    private static void run(StorageMethod method, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice platter = new MemoryDevice();
        HeapOptions opt = r.nextBoolean() ? HeapFixture.options(method)
                : HeapFixture.options(method, 64 * (1 + r.nextInt(4)), 1 + r.nextInt(40), r.nextInt(3000),
                        1024 * r.nextInt(12));
        CrashDevice dev = new CrashDevice(platter);
        Heap h = Heap.create(dev, opt);
        CrashModel m = new CrashModel();
        FreedModel freed = new FreedModel();
        double syncRate = new double[] {0.05, 0.01, 0.002}[r.nextInt(3)];
        long[] nextId = {1};
        for (int round = 1; round <= 3; round++) {
            dev.armCrashAfterWrites(1 + r.nextInt(new int[] {500, 4000, 12_000}[r.nextInt(3)]));
            CrashDevice.CrashReport report;
            try {
                work(h, m, freed, r, syncRate, nextId);
                report = dev.crash(seed * 31 + round);
            } catch (SimulatedCrashException expected) {
                report = dev.crash(seed * 31 + round);
            }
            boolean sweep = r.nextBoolean();
            String context = "after power loss " + round + " (" + report + (sweep ? ", with a sweep" : "") + ")";
            dev = new CrashDevice(platter);
            if (sweep) {
                h = Heap.prepare(dev, opt, null);
                h.forEachAllocated((handle, len) -> {});
                h.finishOpen();
            } else {
                h = Heap.open(dev, opt, null);
            }
            checkAccounting(h, m, freed, m.inFlightBlocks, context); // before the model adopts what was found
            m.checkAndAdopt(h, method, context);
            freed.clear();
        }
        for (int k = 0; k < 300; k++) {
            h.allocate(HeapFixture.payload(-k - 1, HeapFixture.size(r)));
        }
        m.checkContents(h, "overwritten by an allocation after the recovery");
        h.close();
    }

    private static void work(Heap h, CrashModel m, FreedModel freed, SplittableRandom r, double syncRate, long[] nextId) {
        boolean grow = true;
        int phaseEnd = 0;
        for (int op = 0; op < 30_000; op++) {
            if (op >= phaseEnd) {
                grow = !grow || m.isEmpty();
                phaseEnd = op + 500 + r.nextInt(2000);
            }
            if (r.nextDouble() < syncRate) {
                if (r.nextInt(25) == 0) {
                    h.coalesce();
                } else {
                    h.sync();
                }
                m.synced();
                freed.synced();
            } else if (m.isEmpty() || r.nextInt(100) < (grow ? 70 : 20)) {
                int n = r.nextInt(8) == 0 ? 2 + r.nextInt(6) : 1;
                List<ByteBuffer> batch = new ArrayList<>();
                long[] ids = new long[n];
                int[] lens = new int[n];
                m.inFlightBlocks = n;
                m.inFlightBytes = 0;
                for (int k = 0; k < n; k++) {
                    ids[k] = nextId[0]++;
                    lens[k] = HeapFixture.size(r);
                    batch.add(HeapFixture.payload(ids[k], lens[k]));
                    m.inFlightBytes += h.blockSizeFor(lens[k]) + h.opt.acceptableWaste() + h.grain;
                }
                long[] got = n == 1 ? new long[] {h.allocate(batch.get(0))} : h.allocateBatch(batch);
                for (int k = 0; k < n; k++) {
                    m.allocated(got[k], ids[k], lens[k]);
                    freed.reused(h.address(got[k]), h.blockSize(got[k]));
                }
                m.inFlightBlocks = 0;
                m.inFlightBytes = 0;
            } else {
                long handle = m.takeRandom(r);
                h.free(handle);
                freed.freed(h.address(handle), h.blockSize(handle));
            }
        }
    }

    /**
     * The heap below the tail is its free blocks and the allocated blocks on disk, exactly; and
     * every block freed before the last sync, and not reused since, lies in free space, unless the
     * allocation the power cut interrupted placed a block over it (at most as many such blocks as
     * it was placing, none of them a block the model knew).
     */
    private static void checkAccounting(Heap h, CrashModel m, FreedModel freed, long inFlight, String context) {
        TreeMap<Long, Long> allocated = new TreeMap<>();
        h.forEachAllocated((handle, len) -> allocated.put(h.address(handle), h.blockSize(handle)));
        long allocatedBytes = allocated.values().stream().mapToLong(Long::longValue).sum();
        HeapStats s = h.stats();
        assertEquals(h.tail() - h.firstBlock(), s.freeBytes() + allocatedBytes, "free " + s.freeBytes() + " + allocated "
                + allocatedBytes + " bytes against the heap's " + (h.tail() - h.firstBlock()) + " " + context);
        TreeMap<Long, Long> free = new TreeMap<>();
        for (FreeBlock b : h.lists.all()) {
            free.put(b.addr, b.addr + b.size);
        }
        Set<Long> placedByTheCutOne = new HashSet<>();
        for (Map.Entry<Long, Long> e : freed.durable.entrySet()) {
            long at = e.getKey();
            long end = at + e.getValue();
            if (at >= h.tail()) {
                continue;
            }
            Map.Entry<Long, Long> f = free.floorEntry(at);
            if (f != null && f.getValue() >= end) {
                continue;
            }
            String what = "block at " + at + " of " + e.getValue() + " bytes, freed before the last sync, is not free"
                    + " after the recovery, and no allocation under way when the power failed placed a block over it ("
                    + inFlight + " blocks were being placed) " + context;
            boolean overlapped = false;
            Map.Entry<Long, Long> a = allocated.floorEntry(at);
            a = a != null && a.getKey() + a.getValue() > at ? a : allocated.higherEntry(at);
            for (; a != null && a.getKey() < end; a = allocated.higherEntry(a.getKey())) {
                assertFalse(m.live.containsKey(h.handle(a.getKey(), a.getValue())), what);
                placedByTheCutOne.add(a.getKey());
                overlapped = true;
            }
            assertTrue(overlapped && placedByTheCutOne.size() <= inFlight, what);
        }
    }

    /** Blocks freed, by address: those whose free a sync made durable, and those freed since. */
    private static final class FreedModel {
        final TreeMap<Long, Long> durable = new TreeMap<>();
        final Map<Long, Long> sinceSync = new HashMap<>();

        void freed(long addr, long size) {
            sinceSync.put(addr, size);
        }

        void synced() {
            durable.putAll(sinceSync);
            sinceSync.clear();
        }

        /** A block allocated over {@code [addr, addr + size)}: what was freed there is in use again. */
        void reused(long addr, long size) {
            Map.Entry<Long, Long> before = durable.floorEntry(addr);
            if (before != null && before.getKey() + before.getValue() > addr) {
                durable.remove(before.getKey());
            }
            durable.subMap(addr, addr + size).clear();
            sinceSync.entrySet().removeIf(e -> e.getKey() < addr + size && e.getKey() + e.getValue() > addr);
        }

        void clear() {
            durable.clear();
            sinceSync.clear();
        }
    }

    @Test
    void theModelOfFreedBlocksForgetsWhatIsReused() {
        FreedModel f = new FreedModel();
        f.freed(100, 50);
        f.freed(200, 50);
        f.synced();
        f.reused(120, 10);
        assertFalse(f.durable.containsKey(100L));
        assertTrue(f.durable.containsKey(200L));
    }
}
