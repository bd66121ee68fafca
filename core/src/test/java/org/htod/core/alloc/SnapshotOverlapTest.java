package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A log-mode snapshot whose free blocks overlap is refused, even with its CRC right: its blocks
 * were checked against the heap's bounds only, so two blocks over the same bytes went on the free
 * lists, and the heap would have handed those bytes out twice.
 */
class SnapshotOverlapTest {

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void overlappingFreeBlocksAreRefused(StorageMethod method) {
        MemoryDevice dev = new MemoryDevice();
        HeapOptions opt = HeapFixture.options(method);
        Heap h = Heap.create(dev, opt);
        h.useJournal(new RecordingJournal());
        long[] blocks = new long[6];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = h.allocate(HeapFixture.payload(i, 1000 + 300 * i));
        }
        for (int i = 0; i < blocks.length; i += 2) {
            h.free(blocks[i]); // three free blocks, none adjacent
        }
        ByteBuffer good = h.snapshot();
        Heap.fromSnapshot(dev, opt, good.duplicate(), "as written"); // opens
        byte[] bad = new byte[good.remaining()];
        good.duplicate().get(bad);
        ByteBuffer b = ByteBuffer.wrap(bad);
        int lists = b.getInt(72); // then the count of free blocks, at 76 (docs/FORMAT.md)
        long count = b.getLong(76);
        assertTrue(count >= 2, "free blocks in the snapshot: " + count);
        int first = 84 + 8 * lists;
        // The second free block starts a grain into the first.
        b.putLong(first + 12, b.getLong(first) + 1);
        CRC32C crc = new CRC32C();
        crc.update(bad, 0, bad.length - 4);
        b.putInt(bad.length - 4, (int) crc.getValue());
        CorruptStoreException e = assertThrows(CorruptStoreException.class,
                () -> Heap.fromSnapshot(dev, opt, ByteBuffer.wrap(bad), "crafted"));
        assertTrue(e.getMessage().contains("overlap"), e.getMessage());
        assertEquals(-1, e.offset());
    }
}
