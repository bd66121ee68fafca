package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A log-mode heap keeps room at its end for checkpoints: allocations of every other kind (single,
 * batch, unrecorded) refuse it, saying why, and a checkpoint's block, allocated while its
 * predecessor's is still held and that one given back after, always finds room in a heap the
 * others filled, whatever they free and take between checkpoints.
 */
class HeapKeptForCheckpointsTest {
    /** Largest checkpoint payload the heap keeps room for. */
    private static final int CHECKPOINT = 6000;

    /** 256 KiB of heap, grain 64, maxQL 75, w 2000, T 8 KiB. */
    private static HeapOptions small(StorageMethod m) {
        return new HeapOptions(m, HeapFixture.HEAP_OFFSET, 8192 + 256 * 1024, 7, 64, 75, 2000, 8192, 1.5);
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aCheckpointFindsRoomInAHeapOthersFilled(StorageMethod m) {
        Heap h = Heap.create(new MemoryDevice(), small(m));
        h.useJournal(new RecordingJournal());
        h.keepForCheckpoints(CHECKPOINT);
        long kept = h.keptForCheckpoints();
        assertTrue(kept >= 3 * h.blockSizeFor(CHECKPOINT), "kept " + kept);
        long bound = h.end - kept;
        SplittableRandom r = new SplittableRandom(0xC4EC);
        List<Long> held = new ArrayList<>();
        long checkpoint = 0;
        int refused = 0;
        for (int round = 0; round < 300; round++) {
            // Others fill the heap, as far as they may: single blocks, batches, placed values.
            while (true) {
                try {
                    switch (r.nextInt(3)) {
                        case 0 -> held.add(h.allocate(HeapFixture.payload(round, 16 + r.nextInt(3000))));
                        case 1 -> {
                            List<ByteBuffer> batch = new ArrayList<>();
                            for (int i = r.nextInt(1, 6); i > 0; i--) {
                                batch.add(HeapFixture.payload(round, 16 + r.nextInt(1500)));
                            }
                            for (long b : h.allocateBatch(batch)) {
                                held.add(b);
                            }
                        }
                        default -> {
                            long b = h.allocateUnrecorded(HeapFixture.payload(round, 16 + r.nextInt(2000)));
                            h.unrecorded().record(b);
                            held.add(b);
                        }
                    }
                } catch (StoreFullException full) {
                    assertTrue(full.heapHasNoRoom(), full.getMessage());
                    assertTrue(full.getMessage().contains("kept for the log's checkpoints"), full.getMessage());
                    refused++;
                    break;
                }
            }
            for (long b : held) {
                assertTrue(h.address(b) + h.blockSize(b) <= bound, "a block of others at " + h.address(b)
                        + " reaches past " + bound);
            }
            // A checkpoint of any size up to the bound, its predecessor given back once it has its block.
            long next = h.allocateForCheckpoint(HeapFixture.payload(-round, 1 + r.nextInt(CHECKPOINT)));
            if (checkpoint != 0) {
                h.release(checkpoint);
            }
            checkpoint = next;
            // Others free some of theirs, and the heap syncs now and then, as installs make it.
            for (int i = r.nextInt(1, 8); i > 0 && !held.isEmpty(); i--) {
                h.free(held.remove(r.nextInt(held.size())));
            }
            if (r.nextInt(4) == 0) {
                h.sync();
            }
        }
        assertEquals(300, refused, "the heap was full at every checkpoint");
        h.verify();
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void nothingIsKeptInDirectMode(StorageMethod m) {
        Heap h = Heap.create(new MemoryDevice(), small(m));
        assertEquals(0, h.keptForCheckpoints());
        List<Long> blocks = HeapFullBatchTest.fill(h, 1000);
        // The tail reached the end, less than a block of 1000 bytes short of it.
        assertTrue(h.end - h.tail() < h.blockSizeFor(1000), "tail " + h.tail() + " of " + h.end);
        assertTrue(blocks.size() > 200);
    }
}
