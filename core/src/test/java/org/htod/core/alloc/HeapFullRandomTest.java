package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A small heap that fills up again and again: single and batch allocations of mixed sizes, frees,
 * syncs, coalescing, failed writes and syncs, clean and recovering reopens, direct and log mode,
 * against a model. A refused allocation changes nothing; a failed one is undone or makes the heap
 * refuse changes until a reopen; no block is handed out twice or over a live one; the counters
 * tile the heap; on disk the heap agrees with the model.
 */
class HeapFullRandomTest {
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void direct(StorageMethod m) {
        HeapFixture.forEachSeed(m, 6, (method, seed) -> run(method, seed, false));
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void logged(StorageMethod m) {
        HeapFixture.forEachSeed(m, 6, (method, seed) -> run(method, seed, true));
    }

    static void run(StorageMethod method, long seed, boolean log) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice platter = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(platter);
        int grain = 64 * (1 + r.nextInt(8));
        HeapOptions opt = new HeapOptions(method, HeapFixture.HEAP_OFFSET, 8192 + 32 * 1024 + r.nextInt(512 * 1024), 7, grain,
                1 + r.nextInt(40), r.nextInt(3000), r.nextInt(3) == 0 ? 0 : grain * r.nextInt(20), 1.5);
        Heap h = Heap.create(dev, opt);
        if (log) {
            h.useJournal(new RecordingJournal());
        }
        Map<Long, long[]> live = new HashMap<>();
        TreeMap<Long, Long> extents = new TreeMap<>();
        List<Long> handles = new ArrayList<>();
        long nextId = 1;
        boolean exact = true;
        int fulls = 0;
        for (int op = 0; op < 6000; op++) {
            int dice = r.nextInt(100);
            HeapStats before = h.stats();
            if (r.nextInt(20) == 0 && dice < 60) {
                switch (r.nextInt(3)) {
                    case 0 -> dev.failWrite(1 + r.nextInt(3), FaultyDevice.Fault.IO_ERROR, false);
                    case 1 -> dev.failWrite(1 + r.nextInt(3), FaultyDevice.Fault.DISK_FULL, false);
                    default -> dev.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
                }
            }
            int raised = dev.faultsRaised();
            try {
                if (dice < 30 || handles.isEmpty()) {
                    int len = r.nextInt(4) == 0 ? r.nextInt(20_000) : r.nextInt(3000);
                    long id = nextId++;
                    long handle = h.allocate(HeapFixture.payload(id, len));
                    add(h, live, extents, handles, handle, id, len);
                } else if (dice < 60) {
                    int n = 1 + r.nextInt(10);
                    List<ByteBuffer> batch = new ArrayList<>();
                    long[] ids = new long[n];
                    int[] lens = new int[n];
                    for (int k = 0; k < n; k++) {
                        ids[k] = nextId++;
                        lens[k] = r.nextInt(4) == 0 ? r.nextInt(20_000) : r.nextInt(3000);
                        batch.add(HeapFixture.payload(ids[k], lens[k]));
                    }
                    long[] got = h.allocateBatch(batch);
                    for (int k = 0; k < n; k++) {
                        add(h, live, extents, handles, got[k], ids[k], lens[k]);
                    }
                } else if (dice < 92) {
                    int at = r.nextInt(handles.size());
                    long handle = handles.get(at);
                    handles.set(at, handles.get(handles.size() - 1));
                    handles.remove(handles.size() - 1);
                    live.remove(handle);
                    extents.remove(h.address(handle));
                    h.free(handle);
                } else if (dice < 96) {
                    h.sync();
                } else if (dice < 97) {
                    h.coalesce();
                    exact = true;
                } else if (!log) {
                    if (dice < 99) {
                        h = HeapFixture.reopenClean(h, dev);
                    } else {
                        h = HeapFixture.reopenRecovering(h, dev);
                        exact &= method == StorageMethod.TS;
                    }
                    HeapRandomOpsTest.verify(h, live, exact);
                }
            } catch (HtodException e) {
                boolean injected = dev.faultsRaised() > raised;
                if (!injected && !(e instanceof StoreFullException)) {
                    throw e;
                }
                if (!injected) {
                    fulls++;
                }
                dev.heal();
                if (h.refusesChanges()) {
                    assertFalse(log && !injected, "log mode refuses after " + e);
                    h = Heap.open(dev, opt, null);
                    if (log) {
                        fail("log-mode heap refuses changes after " + e);
                    }
                    exact &= method == StorageMethod.TS;
                    HeapRandomOpsTest.verify(h, live, exact);
                } else {
                    HeapStats after = h.stats();
                    assertEquals(before.allocatedBlocks(), after.allocatedBlocks(), "op " + op + " " + e);
                    assertEquals(before.allocatedBytes(), after.allocatedBytes(), "op " + op + " " + e);
                }
            } finally {
                dev.heal();
            }
            HeapStats s = h.stats();
            if (exact) {
                assertEquals(live.size(), s.allocatedBlocks(), "op " + op);
                long bytes = 0;
                for (long hd : live.keySet()) {
                    bytes += h.blockSize(hd);
                }
                assertEquals(bytes, s.allocatedBytes(), "op " + op);
                assertEquals(s.usedBytes(), s.allocatedBytes() + s.freeBytes(), "op " + op + ": free + allocated tile the heap");
            }
            if (!log && op % 500 == 0) {
                HeapRandomOpsTest.verify(h, live, exact);
            }
        }
        if (!log) {
            HeapRandomOpsTest.verify(h, live, exact);
            h = HeapFixture.reopenClean(h, dev);
            HeapRandomOpsTest.verify(h, live, exact);
        }
        assertTrue(fulls > 0, "the heap never filled up");
    }

    static void add(Heap h, Map<Long, long[]> live, TreeMap<Long, Long> extents, List<Long> handles, long handle, long id,
            int len) {
        long a = h.address(handle);
        long e = a + h.blockSize(handle);
        Map.Entry<Long, Long> below = extents.floorEntry(e - 1);
        if (below != null && below.getValue() > a) {
            fail("block at " + a + ".." + e + " overlaps the live block at " + below.getKey() + ".." + below.getValue());
        }
        extents.put(a, e);
        if (live.put(handle, new long[] {id, len}) != null) {
            fail("handed out twice");
        }
        handles.add(handle);
        assertEquals(HeapFixture.payload(id, len), h.read(handle));
    }
}
