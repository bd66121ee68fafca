package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.core.container.StorageMethod;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two tail checkpoints written one after the other (a failed allocation's undo syncs, which may
 * write one, and then writes one; the stamp keeper does the same): the heap syncs between them.
 * The two copies alternate, so the second, written before the first was durable, overwrote the
 * copy holding the last durable checkpoint, and a power cut that dropped the first and tore the
 * second left only the checkpoint before both, whose tail can lie past what the disk holds (after
 * a coalescing moved the tail back, a recovery then refused the store).
 */
class CheckpointPairTest {
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aCheckpointWrittenBeforeTheLastIsDurableSyncsFirst(StorageMethod m) {
        MemoryDevice mem = new MemoryDevice();
        CrashDevice crash = new CrashDevice(mem, 512);
        Heap h = Heap.create(crash, HeapFixture.options(m));
        long[] ids = new long[20];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = h.allocate(HeapFixture.payload(i, 300 + 100 * i));
        }
        h.sync();
        for (int i = 0; i < ids.length; i += 2) {
            h.free(ids[i]);
        }
        h.sync();
        h.writeCheckpoint(); // the first: durable at the next sync
        long first = Checkpoint.read(crash, HeapFixture.HEAP_OFFSET).sequence;
        h.writeCheckpoint(); // the second, before any sync
        long secondCopy = HeapFixture.HEAP_OFFSET + ((first + 1) & 1) * Checkpoint.COPY_SIZE;
        crash.crashKeeping(pos -> pos == secondCopy); // the second torn: its first sector only
        Checkpoint left = Checkpoint.read(mem, HeapFixture.HEAP_OFFSET);
        assertTrue(left != null && left.sequence >= first, "the checkpoint written before the second survives: "
                + (left == null ? "none valid" : "found sequence " + left.sequence + ", the first was " + first));
    }
}
