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
