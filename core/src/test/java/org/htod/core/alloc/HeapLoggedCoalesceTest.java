package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A heap in log mode never coalesces: its frees write nothing, so the headers on disk say
 * allocated for blocks freed since, and a merge (PL and PFL rebuilt their lists from those
 * headers first) turned freed space into blocks allocated for good, and wrote free headers the
 * log does not record. The same churn in direct mode does coalesce, so the test would see it.
 */
class HeapLoggedCoalesceTest {
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void fragmentationDoesNotCoalesceInLogModeAndTheHeapStaysExact(StorageMethod method) {
        assertEquals(0, churn(method, true).coalesces(), "log mode never coalesces");
        assertTrue(churn(method, false).coalesces() > 0, "the same churn coalesces in direct mode (the test reaches it)");
    }

    /** Allocates 12 MB of 4 KB blocks, frees two in three, allocates again; checks the heap; returns its figures. */
    private static HeapStats churn(StorageMethod method, boolean logged) {
        MemoryDevice dev = new MemoryDevice();
        Heap h = Heap.create(dev, HeapFixture.options(method));
        if (logged) {
            h.useJournal(new Heap.Journal() {
                @Override
                public void allocated(long handle) {}

                @Override
                public void freed(long handle) {}
            });
        }
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            live.add(h.allocate(HeapFixture.payload(i, 4100 + i % 7 * 100)));
        }
        h.sync();
        List<Long> kept = new ArrayList<>();
        for (int i = 0; i < live.size(); i++) {
            if (i % 3 == 2) {
                kept.add(live.get(i));
            } else {
                h.free(live.get(i)); // in log mode this writes nothing to the block's header
            }
        }
        for (int i = 0; i < 500; i++) {
            kept.add(h.allocate(HeapFixture.payload(10_000 + i, 6000 + i % 5 * 1000)));
        }
        HeapStats s = h.stats();
        assertEquals(kept.size(), s.allocatedBlocks(), (logged ? "log" : "direct") + " mode, " + method + ": " + s);
        long[] visited = {0};
        h.forEachAllocated((handle, len) -> visited[0]++);
        assertEquals(kept.size(), visited[0], "every allocated block is one the heap allocated and did not free");
        HeapVerifyReport v = h.verify();
        assertEquals(0, v.leakedBlocks(), v.toString());
        if (logged) {
            assertThrows(IllegalStateException.class, h::coalesce);
        }
        return s;
    }
}
