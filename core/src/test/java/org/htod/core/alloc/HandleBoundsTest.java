package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.htod.core.CorruptStoreException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A handle that names no block of the heap (taken from a structure whose checksums hold: a table
 * state, a catalog value, a placed put's record) is refused as damage before a buffer of its size
 * is made. Its size bits past 2 GiB threw ArithmeticException, and a size just below it allocated
 * that much before the block's header could be checked.
 */
class HandleBoundsTest {
    @Test
    void aHandleNamingNoBlockOfTheHeapIsDamage() {
        Heap h = Heap.create(new MemoryDevice(), HeapFixture.options(StorageMethod.TS));
        long block = h.allocate(HeapFixture.payload(1, 100));
        long addr = h.address(block);
        long grain = h.opt.grain();
        for (long size : new long[] {(1L << 24) - 1, (1L << 31) / grain, (1L << 30) / grain}) {
            long bad = h.handle(addr, size * grain);
            assertThrows(CorruptStoreException.class, () -> h.read(bad), "a block of " + size * grain + " bytes");
        }
        assertThrows(CorruptStoreException.class, () -> h.read(h.handle(0, grain)), "below the heap");
    }
}
