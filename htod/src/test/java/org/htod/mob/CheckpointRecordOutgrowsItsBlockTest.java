package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.HtodException;
import org.htod.core.alloc.Heap;
import org.htod.core.alloc.HeapOptions;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A checkpoint's block is allocated for its record as the heap is before the allocation, and the
 * record encoded after: values placed meanwhile, without the install lock, add free blocks to its
 * snapshot. A record that outgrew its block gets a larger one, the first given back; one that
 * keeps outgrowing them is refused after a bounded number of tries, every block given back. The
 * record never overruns its block.
 */
class CheckpointRecordOutgrowsItsBlockTest {
    /** A log-mode heap of 4 MiB with no journal to tell. */
    private static Heap logHeap() {
        Heap h = Heap.create(new MemoryDevice(), HeapOptions.defaults(StorageMethod.PFL, 8192, 4L << 20, 7));
        h.useJournal(new Heap.Journal() {
            @Override
            public void allocated(long handle) {}

            @Override
            public void freed(long handle) {}
        });
        return h;
    }

    /** Places {@code n} values as writers do, each a block the snapshot counts free (12 bytes of it). */
    private static void place(Heap h, int n) {
        for (int i = 0; i < n; i++) {
            h.allocateUnrecorded(ByteBuffer.allocate(16));
        }
    }

    @Test
    void aRecordThatOutgrewItsBlockGetsALargerOne() {
        Heap h = logHeap();
        List<Long> blocks = new ArrayList<>();
        int[] encodes = {0};
        long size = h.snapshot().remaining();
        Installs.Placed p = Installs.placeRecord(h, size, want -> {
            long b = h.allocateForCheckpoint(ByteBuffer.allocate((int) want));
            blocks.add(b);
            return b;
        }, () -> {
            if (encodes[0]++ == 0) {
                place(h, 2000); // 24,000 bytes more of snapshot, while the first block was allocated
            }
            return h.snapshot();
        });
        assertEquals(2, blocks.size(), "a second block, for the record that outgrew the first");
        assertEquals(blocks.get(1), p.block());
        assertTrue(p.record().remaining() >= size + 2000 * 12, "the record of " + p.record().remaining() + " bytes");
        assertTrue(h.fitsPayload(p.block(), 0, p.record().remaining()), "the record fits its block");
        assertEquals(2001, h.stats().allocatedBlocks(), "the values placed and the second block: the first given back");
    }

    @Test
    void aRecordThatKeepsOutgrowingItsBlocksIsRefusedAfterBoundedTries() {
        Heap h = logHeap();
        List<Long> blocks = new ArrayList<>();
        HtodException refused = assertThrows(HtodException.class, () -> Installs.placeRecord(h, h.snapshot().remaining(),
                want -> {
                    long b = h.allocateForCheckpoint(ByteBuffer.allocate((int) want));
                    blocks.add(b);
                    return b;
                }, () -> {
                    place(h, 1000); // more than any margin a retry adds
                    return h.snapshot();
                }));
        assertEquals(Installs.CHECKPOINT_TRIES, blocks.size(), refused.getMessage());
        assertTrue(refused.getMessage().contains("at each of " + Installs.CHECKPOINT_TRIES + " tries"), refused.getMessage());
        assertEquals(1000L * Installs.CHECKPOINT_TRIES, h.stats().allocatedBlocks(),
                "the values placed only: every block of the checkpoint given back");
    }
}
