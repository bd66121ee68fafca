package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Power loss during long runs of random heap operations, for each storage method, from a fixed
 * list of seeds. A run grows and shrinks the heap in phases (thousands of live blocks, megabytes
 * freed at once, so that fragmentation starts coalescing by itself), syncs often or rarely (so
 * that 1024 fresh extents make allocation sync by itself), and now and then advances the stamps
 * as a long-lived heap would have (so that a checkpoint is forced). The power fails at a write
 * drawn anywhere in the first 800, 8000 or 25000; a seeded subset of the unsynced writes survives
 * (one torn); the heap reopens through its method's recovery and {@link CrashModel} checks that
 * every synced block is whole and that nothing else is allocated but what the operations since
 * the last sync may have left. Half the runs then work on and crash again, which is what shows a
 * recovery that restarts stamps too low. At the end, new allocations must not land on surviving
 * blocks and a coalescing scan must reclaim what PL and PFL lost track of.
 */
class HeapCrashTest {
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);
    private static final int RUNS = 16 * SCALE;
    private static final long FIRST_SEED = 0x4EA9_C0DE_0000L;

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void everySyncedAllocationSurvivesPowerLoss(StorageMethod method) {
        Map<String, Integer> reached = new HashMap<>();
        for (int i = 0; i < RUNS; i++) {
            long seed = FIRST_SEED + i;
            try {
                run(method, seed, reached);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed=0x" + Long.toHexString(seed) + " method=" + method + ": " + e, e);
            }
        }
        System.out.println(method + ", " + RUNS + " runs from seed 0x" + Long.toHexString(FIRST_SEED) + ": " + reached);
        for (String what : new String[] {"second crash", "fragmentation coalescing", "sync at 1024 fresh extents",
            "forced checkpoint"}) {
            assertTrue(reached.getOrDefault(what, 0) >= RUNS / 8, "too few runs reached a " + what + ": " + reached);
        }
    }

    /**
     * Runs that once failed, replayed at every scale. PFL, seed {@code 0x4ea9c0de0118} (met at
     * scale 25): after the second power cut the lists named a block inside a larger free one. A
     * free of a durable block had written a next pointer naming a split's remainder, the crash
     * kept that write and dropped the split's, and recovery followed the pointer to a header an
     * earlier merge had swallowed (see {@code DiskLists.durableFrom}).
     */
    @org.junit.jupiter.api.Test
    void runsThatOnceFailedStillPass() {
        long seed = 0x4EA9_C0DE_0118L;
        try {
            run(StorageMethod.PFL, seed, new HashMap<>());
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed=0x" + Long.toHexString(seed) + " method=PFL: " + e, e);
        }
        // With failing writes, TS (met at scale 16): the checkpoint forced to keep stamps near
        // the durable one was written after the allocation, and its failure reached a caller
        // whose block was allocated, without the handle; a crash then found a block no one made.
        seed = 0x4EA9_C0DE_1008L;
        try {
            run(StorageMethod.TS, seed, new HashMap<>(), true);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed=0x" + Long.toHexString(seed) + " method=TS, failing writes: " + e, e);
        }
    }

    /**
     * Crash, recover, work, crash again, with the first crash losing one tail block and keeping the
     * one after it: the second recovery walks past the tail over the block written since, and then
     * meets the kept block's header, which no recovery ever accepted. It must be taken for what it
     * is, an old header, which is why the first recovery restarts stamps far above what it saw.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aSecondRecoveryDoesNotTakeHeadersTheFirstLeftBehind(StorageMethod method) {
        MemoryDevice disk = new MemoryDevice();
        HeapOptions opt = HeapFixture.options(method);
        Heap h = Heap.create(disk, opt);
        java.util.Set<Long> expected = new java.util.HashSet<>();
        for (int i = 0; i < 20; i++) {
            expected.add(h.allocate(HeapFixture.payload(i, 1000)));
        }
        h.sync();
        long lost = h.allocate(HeapFixture.payload(100, 1000));
        long behind = h.allocate(HeapFixture.payload(101, 1000));
        assertEquals(h.address(lost) + h.blockSize(lost), h.address(behind), "two blocks in a row at the tail");
        disk.write(h.address(lost), ByteBuffer.allocate(BlockHeader.SIZE)); // power lost: this write never landed
        Heap back = Heap.open(disk, opt, null); // the first heap is abandoned, as a crash leaves it
        assertEquals(h.address(lost), back.tail(), "the first recovery stops where the lost block was");
        long again = back.allocate(HeapFixture.payload(200, 1000));
        assertEquals(lost, again, "the next block takes the lost one's place");
        back.sync();
        expected.add(again);
        Heap third = Heap.open(disk, opt, null); // abandoned again
        java.util.Set<Long> allocated = new java.util.HashSet<>();
        third.forEachAllocated((handle, length) -> allocated.add(handle));
        assertEquals(expected, allocated, "after the second crash, block " + Long.toHexString(behind)
                + " (never recovered) is back if it is in this set");
        assertEquals(HeapFixture.payload(200, 1000), third.read(again));
        third.verify();
    }

    /**
     * The same with allocations whose write fails now and then, after none, 512 or 1,024 bytes
     * of it or all of it reached the disk: the allocation is undone, the heap goes on, and a power cut before the
     * next sync may keep the failed write and lose the ones that took it back. Nothing synced may
     * be lost, nothing may overlap, and besides the operations since the last sync only the
     * failed allocations may have left blocks allocated.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void everySyncedAllocationSurvivesFailedWritesAndPowerLoss(StorageMethod method) {
        Map<String, Integer> reached = new HashMap<>();
        for (int i = 0; i < RUNS / 2; i++) {
            long seed = FIRST_SEED + 0x1000 + i;
            try {
                run(method, seed, reached, true);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed=0x" + Long.toHexString(seed) + " method=" + method + ", failing writes: "
                        + e, e);
            }
        }
        System.out.println(method + ", failing writes, " + RUNS / 2 + " runs: " + reached);
        assertTrue(reached.getOrDefault("failed allocation", 0) >= RUNS / 2, "too few failed allocations: " + reached);
    }

    void run(StorageMethod method, long seed, Map<String, Integer> reached) {
        run(method, seed, reached, false);
    }

    void run(StorageMethod method, long seed, Map<String, Integer> reached, boolean failWrites) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice platter = new MemoryDevice();
        HeapOptions opt = r.nextBoolean() ? HeapFixture.options(method)
                : HeapFixture.options(method, 64 * (1 + r.nextInt(4)), 1 + r.nextInt(40), r.nextInt(3000), 1024 * r.nextInt(12));
        CrashDevice dev = new CrashDevice(platter);
        FaultyDevice faults = failWrites ? new FaultyDevice(dev) : null;
        Heap h = Heap.create(failWrites ? faults : dev, opt);
        CrashModel m = new CrashModel();
        double syncRate = new double[] {0.1, 0.01, 0.0002}[r.nextInt(3)];
        int rounds = 1 + r.nextInt(2);
        long[] nextId = {1};
        for (int round = 1; round <= rounds; round++) {
            int limit = new int[] {800, 8000, 25_000}[r.nextInt(3)];
            dev.armCrashAfterWrites(1 + r.nextInt(limit));
            CrashDevice.CrashReport report;
            try {
                work(h, faults, m, r, syncRate, nextId, reached);
                report = dev.crash(seed + round); // no cut in time: power lost after the last operation
            } catch (SimulatedCrashException expected) {
                report = dev.crash(seed + round);
            }
            String context = "after power loss " + round + " of " + rounds + " (" + report + "), seed 0x"
                    + Long.toHexString(seed);
            dev = new CrashDevice(platter);
            faults = failWrites ? new FaultyDevice(dev) : null;
            h = Heap.open(failWrites ? faults : dev, opt, null);
            m.checkAndAdopt(h, method, context);
            if (round == 2) {
                reached.merge("second crash", 1, Integer::sum);
            }
        }
        // Fill: new allocations must not land on any surviving block.
        for (int k = 0; k < 200; k++) {
            h.allocate(HeapFixture.payload(-k - 1, HeapFixture.size(r)));
        }
        m.checkContents(h, "overwritten by a new allocation, seed 0x" + Long.toHexString(seed));
        h.coalesce();
        HeapVerifyReport after = h.verify();
        assertEquals(0, after.leakedBlocks(), "the coalescing scan reclaims what recovery lost track of: " + after);
        h.close();
    }

    /**
     * Random operations until the power fails (or 40,000 operations have run). With {@code
     * faults}, one allocation in 150 is armed to fail at one of its first writes after part of it
     * landed; a failure the heap cannot take back (a write of a coalescing it started) ends the
     * work, as a power cut would.
     */
    private static void work(Heap h, FaultyDevice faults, CrashModel m, SplittableRandom r, double syncRate,
            long[] nextId, Map<String, Integer> reached) {
        long waste = h.opt.acceptableWaste() + h.grain;
        boolean grow = true;
        int phaseEnd = 0;
        boolean freshSync = false;
        boolean forced = false;
        long coalescedByAllocation = 0;
        try {
            for (int op = 0; op < 40_000; op++) {
                if (op >= phaseEnd) {
                    grow = !grow || m.isEmpty();
                    phaseEnd = op + 800 + r.nextInt(2500);
                }
                if (r.nextInt(3000) == 0) {
                    h.stamp += HeapRecovery.STAMP_GAP / 4; // as if 2^30 stamps had been issued: forces a checkpoint
                    forced = true;
                }
                freshSync |= h.fresh.size() >= Heap.FRESH_LIMIT;
                if (r.nextDouble() < syncRate) {
                    if (r.nextInt(20) == 0) {
                        h.coalesce();
                    } else {
                        h.sync();
                    }
                    m.synced();
                } else if (m.isEmpty() || r.nextInt(100) < (grow ? 75 : 15)) {
                    long before = h.coalesces;
                    if (faults != null && r.nextInt(150) == 0) {
                        int sectors = r.nextInt(4); // 0: nothing lands; 3: all of it
                        faults.failWriteAfter(1 + r.nextInt(2), sectors == 3 ? Integer.MAX_VALUE : 512 * sectors);
                        try {
                            allocate(h, m, r, waste, nextId);
                        } catch (org.htod.core.HtodIOException injected) {
                            m.failed();
                            reached.merge("failed allocation", 1, Integer::sum);
                            if (h.refusesChanges()) {
                                return;
                            }
                        } finally {
                            faults.heal();
                        }
                    } else {
                        allocate(h, m, r, waste, nextId);
                    }
                    coalescedByAllocation += h.coalesces - before;
                } else {
                    h.free(m.takeRandom(r));
                }
            }
        } finally {
            if (freshSync) {
                reached.merge("sync at 1024 fresh extents", 1, Integer::sum);
            }
            if (forced) {
                reached.merge("forced checkpoint", 1, Integer::sum);
            }
            if (coalescedByAllocation > 0) {
                reached.merge("fragmentation coalescing", 1, Integer::sum);
            }
        }
    }

    private static void allocate(Heap h, CrashModel m, SplittableRandom r, long waste, long[] nextId) {
        int n = r.nextInt(10) == 0 ? 1 + r.nextInt(8) : 0;
        if (n == 0) {
            int len = HeapFixture.size(r);
            long id = nextId[0]++;
            m.inFlightBlocks = 1;
            m.inFlightBytes = h.blockSizeFor(len) + waste;
            m.allocated(h.allocate(HeapFixture.payload(id, len)), id, len);
        } else {
            List<ByteBuffer> batch = new ArrayList<>();
            long[] ids = new long[n];
            int[] lens = new int[n];
            m.inFlightBlocks = n;
            m.inFlightBytes = 0;
            for (int k = 0; k < n; k++) {
                ids[k] = nextId[0]++;
                lens[k] = HeapFixture.size(r);
                batch.add(HeapFixture.payload(ids[k], lens[k]));
                m.inFlightBytes += h.blockSizeFor(lens[k]) + waste;
            }
            long[] got = h.allocateBatch(batch);
            for (int k = 0; k < n; k++) {
                m.allocated(got[k], ids[k], lens[k]);
            }
        }
        m.inFlightBlocks = 0;
        m.inFlightBytes = 0;
    }
}
