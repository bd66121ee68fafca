package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Power loss during random heap operations, for each storage method: the power fails at a random
 * write, a seeded subset of the unsynced writes survives (one of them torn), the heap is
 * reopened through its method's recovery, and then:
 *
 * <ul>
 *   <li>every block whose allocation was synced, and that was not freed since, is allocated and
 *       intact;
 *   <li>the blocks on disk tile the heap and no block is both allocated and on a free list;
 *   <li>allocating afresh never hands out a surviving block (checked by filling and rereading);
 *   <li>allocated space beyond the synced blocks is bounded by the allocations in flight, and the
 *       space PL and PFL lose track of comes back at the next coalescing scan.
 * </ul>
 */
class HeapCrashTest {
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);
    private static final int CRASH_POINTS = 600 * SCALE;

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void everySyncedAllocationSurvivesPowerLoss(StorageMethod method) {
        HeapFixture.forEachSeed(method, CRASH_POINTS, this::run);
    }

    private void run(StorageMethod method, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice platter = new MemoryDevice();
        CrashDevice dev = new CrashDevice(platter);
        HeapOptions opt = r.nextBoolean() ? HeapFixture.options(method)
                : HeapFixture.options(method, 64 * (1 + r.nextInt(4)), 1 + r.nextInt(40), r.nextInt(3000), 1024 * r.nextInt(12));
        Heap h = Heap.create(dev, opt);

        Map<Long, long[]> live = new HashMap<>();
        Map<Long, long[]> synced = new HashMap<>();
        Set<Long> freedSinceSync = new HashSet<>();
        long allocatedSinceSync = 0;
        long inFlight = 0; // most bytes the operation under way may leave allocated if the power fails in it
        long waste = opt.acceptableWaste() + opt.grain();
        List<Long> handles = new ArrayList<>();
        long nextId = 1;
        int warmUp = r.nextInt(300);
        dev.armCrashAfterWrites(warmUp + 1 + r.nextInt(200));
        try {
            for (int op = 0; op < 100_000; op++) {
                int dice = r.nextInt(100);
                if (dice < 45 || handles.isEmpty()) {
                    int len = HeapFixture.size(r);
                    long id = nextId++;
                    inFlight = h.blockSizeFor(len) + waste;
                    long handle = h.allocate(HeapFixture.payload(id, len));
                    live.put(handle, new long[] {id, len});
                    handles.add(handle);
                    allocatedSinceSync += h.blockSize(handle);
                    inFlight = 0;
                } else if (dice < 50) {
                    List<ByteBuffer> batch = new ArrayList<>();
                    List<long[]> meta = new ArrayList<>();
                    for (int k = 1 + r.nextInt(8); k > 0; k--) {
                        long id = nextId++;
                        int len = HeapFixture.size(r);
                        batch.add(HeapFixture.payload(id, len));
                        meta.add(new long[] {id, len});
                    }
                    inFlight = 0;
                    for (ByteBuffer b : batch) {
                        inFlight += h.blockSizeFor(b.remaining()) + waste;
                    }
                    long[] got = h.allocateBatch(batch);
                    for (int k = 0; k < got.length; k++) {
                        live.put(got[k], meta.get(k));
                        handles.add(got[k]);
                        allocatedSinceSync += h.blockSize(got[k]);
                    }
                    inFlight = 0;
                } else if (dice < 88) {
                    int at = r.nextInt(handles.size());
                    long handle = handles.get(at);
                    handles.set(at, handles.get(handles.size() - 1));
                    handles.remove(handles.size() - 1);
                    live.remove(handle);
                    freedSinceSync.add(handle);
                    h.free(handle);
                } else if (dice < 99) {
                    h.sync();
                    synced = new HashMap<>(live);
                    freedSinceSync.clear();
                    allocatedSinceSync = 0;
                } else {
                    h.coalesce();
                    synced = new HashMap<>(live);
                    freedSinceSync.clear();
                    allocatedSinceSync = 0;
                }
            }
        } catch (SimulatedCrashException expected) {
            // the power failed here
        }
        CrashDevice.CrashReport crash = dev.crash(seed);
        String context = "after " + crash;

        Heap back = Heap.open(platter, opt, null);
        HeapVerifyReport v = back.verify();
        long syncedBytes = 0;
        for (Map.Entry<Long, long[]> e : synced.entrySet()) {
            if (!freedSinceSync.contains(e.getKey())) {
                long[] m = e.getValue();
                assertEquals(HeapFixture.payload(m[0], (int) m[1]), back.read(e.getKey()),
                        "synced block " + Long.toHexString(e.getKey()) + " " + context);
                syncedBytes += back.blockSize(e.getKey());
            }
        }
        long freedBytes = 0;
        for (long f : freedSinceSync) {
            freedBytes += back.blockSize(f);
        }
        assertTrue(v.allocatedBytes() <= syncedBytes + freedBytes + allocatedSinceSync + inFlight,
                "allocated on disk " + v.allocatedBytes() + " > synced " + syncedBytes + " + freed since " + freedBytes
                        + " + allocated since " + allocatedSinceSync + " + in flight " + inFlight + " " + context);
        if (method == StorageMethod.TS) {
            assertEquals(0, v.leakedBlocks(), "TS recovery scans every header, so it loses nothing: " + v);
        }

        // Fill: new allocations must not land on any surviving block.
        List<Long> fresh = new ArrayList<>();
        for (int k = 0; k < 200; k++) {
            fresh.add(back.allocate(HeapFixture.payload(-k - 1, HeapFixture.size(r))));
        }
        for (Map.Entry<Long, long[]> e : synced.entrySet()) {
            if (!freedSinceSync.contains(e.getKey())) {
                long[] m = e.getValue();
                assertEquals(HeapFixture.payload(m[0], (int) m[1]), back.read(e.getKey()),
                        "synced block " + Long.toHexString(e.getKey()) + " overwritten by a new allocation " + context);
            }
        }
        back.coalesce();
        HeapVerifyReport after = back.verify();
        assertEquals(0, after.leakedBlocks(), "the coalescing scan reclaims what recovery lost track of: " + after);
        back.close();
    }
}
