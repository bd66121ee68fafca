package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A device that fails in the middle of the heap's work (an I/O error, the disk full): the error
 * reaches the caller with its type, the heap refuses further changes instead of acting on free
 * lists that may no longer match the disk, and a reopen recovers every block that was synced.
 */
class HeapFaultTest {

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFailedWriteLeavesTheHeapUsableOrRefusingAndAReopenKeepsEverySyncedBlock(StorageMethod m) {
        for (FaultyDevice.Fault fault : FaultyDevice.Fault.values()) {
            for (int nth = 1; nth <= 12; nth++) {
                MemoryDevice mem = new MemoryDevice();
                FaultyDevice dev = new FaultyDevice(mem);
                Heap h = Heap.create(dev, HeapFixture.options(m));
                Map<Long, Integer> synced = new HashMap<>();
                for (int i = 0; i < 30; i++) {
                    synced.put(h.allocate(HeapFixture.payload(i, 700 + 300 * i)), 700 + 300 * i);
                }
                Long first = synced.keySet().iterator().next();
                h.free(first);
                synced.remove(first);
                h.sync();
                dev.failWrite(nth, fault, false);
                RuntimeException e = assertThrows(RuntimeException.class, () -> {
                    for (int i = 0; i < 40; i++) {
                        long x = h.allocate(HeapFixture.payload(100 + i, 900));
                        if (i % 3 == 0) {
                            h.free(x);
                        }
                        if (i % 7 == 0) {
                            h.sync();
                        }
                    }
                });
                assertTrue(fault == FaultyDevice.Fault.DISK_FULL ? e instanceof StoreFullException : e instanceof HtodIOException,
                        "typed error for " + fault + ": " + e);
                dev.heal();
                // A failed allocation write is undone and leaves the heap usable; a failed free or
                // sync leaves memory and disk unsure of each other, and the heap refuses changes.
                try {
                    h.allocate(HeapFixture.payload(1, 10));
                    h.sync();
                    h.verify(); // what memory holds is what the disk says
                } catch (HtodException refused) {
                    assertTrue(refused.getMessage().contains("reopen"), refused.getMessage());
                }
                Heap back = Heap.open(mem, h.opt, null);
                for (Map.Entry<Long, Integer> s : synced.entrySet()) {
                    long id = -1;
                    for (int i = 0; i < 30; i++) {
                        if (700 + 300 * i == s.getValue()) {
                            id = i;
                        }
                    }
                    assertEquals(HeapFixture.payload(id, s.getValue()), back.read(s.getKey()), fault + " at write " + nth);
                }
                back.verify();
            }
        }
    }

    /**
     * Each way an allocation places a block (a free block whole, a free block split, the tail, a
     * batch), its write failing at each of its device writes: the error reaches the caller, and
     * every change the allocation made in memory is taken back ({@code AllocationUndo}), so the
     * heap's figures are what they were, the same request then succeeds, and memory matches the
     * disk.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFailedAllocationWriteIsTakenBackInMemory(StorageMethod m) {
        int[] requests = {1000, 400, 6000, -1}; // whole (a freed 1,000-byte block), split (of one), tail, batch
        for (int request : requests) {
            for (int nth = 1; nth <= 3; nth++) {
                FaultyDevice dev = new FaultyDevice(new MemoryDevice());
                Heap h = Heap.create(dev, HeapFixture.options(m));
                java.util.List<Long> blocks = new java.util.ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    blocks.add(h.allocate(HeapFixture.payload(i, i % 2 == 0 ? 1000 : 3000)));
                }
                for (int i = 2; i < 12; i += 4) {
                    h.free(blocks.get(i)); // 1,000-byte blocks in the middle of their list
                }
                h.sync(); // the freed extents durable, so that they may be split
                HeapStats before = h.stats();
                dev.failWrite(nth, FaultyDevice.Fault.IO_ERROR, false);
                int raised = dev.faultsRaised();
                String where = m + ", request " + request + ", write " + nth;
                try {
                    place(h, request);
                } catch (HtodIOException expected) {
                    // the case under test
                }
                dev.heal();
                if (dev.faultsRaised() == raised) {
                    continue; // this placement makes fewer writes than nth
                }
                assertEquals(before, h.stats(), where + ": the failed allocation is undone");
                long[] placed = place(h, request);
                for (int k = 0; k < placed.length; k++) {
                    assertEquals(HeapFixture.payload(1000 + k, size(request, k)), h.read(placed[k]), where);
                }
                h.sync();
                h.verify();
            }
        }
    }

    /** Places {@code request} bytes with {@link Heap#allocate}, or with {@code -1} a batch of four. */
    private static long[] place(Heap h, int request) {
        if (request > 0) {
            return new long[] {h.allocate(HeapFixture.payload(1000, request))};
        }
        java.util.List<java.nio.ByteBuffer> batch = new java.util.ArrayList<>();
        for (int k = 0; k < 4; k++) {
            batch.add(HeapFixture.payload(1000 + k, size(request, k)));
        }
        return h.allocateBatch(batch);
    }

    private static int size(int request, int k) {
        return request > 0 ? request : 900 + 1100 * k;
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFullHeapRefusesWithATypedErrorAndStaysUsable(StorageMethod m) {
        HeapOptions small = new HeapOptions(m, HeapFixture.HEAP_OFFSET, 8192 + 64 * 1024, 7, 512, 75, 2000, 8192, 1.5);
        Heap h = Heap.create(new MemoryDevice(), small);
        java.util.List<Long> blocks = new java.util.ArrayList<>();
        StoreFullException full = assertThrows(StoreFullException.class, () -> {
            while (true) {
                blocks.add(h.allocate(HeapFixture.payload(blocks.size(), 4000)));
            }
        });
        assertTrue(full.getMessage().contains("no room") && full.getMessage().contains("heap ends at"), full.getMessage());
        h.free(blocks.get(0));
        long again = h.allocate(HeapFixture.payload(99, 4000));
        assertEquals(HeapFixture.payload(99, 4000), h.read(again));
        h.verify();
    }
}
