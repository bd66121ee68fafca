package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Random allocate / batch-allocate / free / rewrite / sync / coalesce / reopen sequences against
 * a map model, for each storage method. After every reopen, and at the end, the heap is verified
 * on disk and every live block's content read back.
 */
class HeapRandomOpsTest {
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);
    private static final int SEEDS = 4;
    private static final int OPS_PER_SEED = 55_000 * SCALE;

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void randomOperationsMatchTheModel(StorageMethod method) {
        HeapFixture.forEachSeed(method, SEEDS, this::run);
    }

    private void run(StorageMethod method, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice dev = new MemoryDevice();
        HeapOptions opt = r.nextBoolean() ? HeapFixture.options(method)
                : HeapFixture.options(method, 64 * (1 + r.nextInt(8)), 1 + r.nextInt(100), r.nextInt(4096), 1024 * r.nextInt(16));
        Heap h = Heap.create(dev, opt);
        Map<Long, long[]> live = new HashMap<>(); // handle -> {id, length}
        List<Long> handles = new ArrayList<>();
        long nextId = 1;
        // PL and PFL may lose track of free blocks in a recovery until the next coalescing scan.
        boolean leaksPossible = false;
        for (int op = 0; op < OPS_PER_SEED; op++) {
            int dice = r.nextInt(1000);
            if (dice < 430 || handles.isEmpty()) {
                int len = HeapFixture.size(r);
                long id = nextId++;
                long handle = h.allocate(HeapFixture.payload(id, len));
                add(live, handles, handle, id, len);
            } else if (dice < 460) {
                int n = 1 + r.nextInt(12);
                List<ByteBuffer> batch = new ArrayList<>();
                long[] ids = new long[n];
                int[] lens = new int[n];
                for (int k = 0; k < n; k++) {
                    ids[k] = nextId++;
                    lens[k] = HeapFixture.size(r);
                    batch.add(HeapFixture.payload(ids[k], lens[k]));
                }
                long[] got = h.allocateBatch(batch);
                for (int k = 0; k < n; k++) {
                    add(live, handles, got[k], ids[k], lens[k]);
                }
            } else if (dice < 880) {
                int at = r.nextInt(handles.size());
                long handle = handles.get(at);
                handles.set(at, handles.get(handles.size() - 1));
                handles.remove(handles.size() - 1);
                live.remove(handle);
                h.free(handle);
            } else if (dice < 930) {
                long handle = handles.get(r.nextInt(handles.size()));
                int len = HeapFixture.size(r);
                long id = nextId++;
                if (h.rewrite(handle, HeapFixture.payload(id, len))) {
                    live.put(handle, new long[] {id, len});
                }
            } else if (dice < 990) {
                checkOne(h, live, handles.get(r.nextInt(handles.size())));
            } else if (dice < 996) {
                h.sync();
            } else if (dice < 997) {
                h.coalesce();
                leaksPossible = false;
                verify(h, live, true);
            } else if (dice < 999) {
                h = HeapFixture.reopenClean(h, dev);
                assertEquals("snapshot", h.recoveryReport().path());
                verify(h, live, !leaksPossible);
            } else {
                h = HeapFixture.reopenRecovering(h, dev);
                leaksPossible |= method != StorageMethod.TS;
                verify(h, live, !leaksPossible);
            }
        }
        h = HeapFixture.reopenClean(h, dev);
        verify(h, live, !leaksPossible);
        h.coalesce();
        verify(h, live, true);
        h.close();
    }

    private static void add(Map<Long, long[]> live, List<Long> handles, long handle, long id, int len) {
        if (live.put(handle, new long[] {id, len}) != null) {
            fail("handle " + Long.toHexString(handle) + " was handed out twice");
        }
        handles.add(handle);
    }

    private static void checkOne(Heap h, Map<Long, long[]> live, long handle) {
        long[] v = live.get(handle);
        assertEquals(HeapFixture.payload(v[0], (int) v[1]), h.read(handle), "content of block " + Long.toHexString(handle));
    }

    /** On-disk invariants, counters, and every live block intact. */
    static void verify(Heap h, Map<Long, long[]> live, boolean exactCounters) {
        HeapVerifyReport v = h.verify();
        assertEquals(v.usedBytes(), v.allocatedBytes() + v.freeBytes() + v.leakedBytes(), "blocks tile the heap: " + v);
        assertEquals(live.size(), v.allocatedBlocks(), "allocated blocks on disk: " + v);
        long modelBytes = 0;
        for (long handle : live.keySet()) {
            modelBytes += h.blockSize(handle);
            checkOne(h, live, handle);
        }
        assertEquals(modelBytes, v.allocatedBytes(), "allocated bytes on disk");
        HeapStats s = h.stats();
        assertEquals(v.freeBytes(), s.freeBytes(), "free bytes in memory vs on disk");
        if (exactCounters) {
            assertEquals(0, v.leakedBlocks(), "leaked blocks after a clean reopen or a TS scan: " + v);
            assertEquals(modelBytes, s.allocatedBytes(), "allocated byte counter");
            assertEquals(live.size(), s.allocatedBlocks(), "allocated block counter");
        }
    }
}
