package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.core.container.StorageMethod;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
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
        Heap h = withFreedBlocks(crash, m);
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

    /**
     * A process dies right after a sync wrote a checkpoint, which its page cache still holds
     * (modelled by writing that checkpoint, unsynced, into the reopened device); the recovering
     * open reads it, and its first checkpoint must not overwrite the last durable one before it is
     * durable: a power cut then, which dropped the first and tore the second, left only the
     * checkpoint before both.
     */
    @ParameterizedTest
    @EnumSource(names = {"PL", "PFL"})
    void aRecoveringOpenSyncsTheCheckpointItReadBeforeWritingTheNext(StorageMethod m) {
        MemoryDevice mem = new MemoryDevice();
        CrashDevice first = new CrashDevice(mem, 512);
        Heap h = withFreedBlocks(first, m);
        h.sync(); // writes checkpoint n, durable at the next sync, which never comes
        Checkpoint n = Checkpoint.read(first, HeapFixture.HEAP_OFFSET);
        long at = HeapFixture.HEAP_OFFSET + (n.sequence & 1) * Checkpoint.COPY_SIZE;
        java.nio.ByteBuffer copy = java.nio.ByteBuffer.allocate(Checkpoint.COPY_SIZE);
        first.read(at, copy);
        first.crashKeeping(pos -> false); // the process dies: what it wrote since the sync is lost ...
        CrashDevice second = new CrashDevice(mem, 512);
        second.write(at, copy.flip()); // ... but for checkpoint n, still in the page cache
        long nextCopy = HeapFixture.HEAP_OFFSET + ((n.sequence + 1) & 1) * Checkpoint.COPY_SIZE;
        boolean[] nextWritten = {false};
        BlockDevice cutAfterNext = new ForwardingDevice(second) { // power fails at the sync after n + 1
            @Override
            public void write(long pos, java.nio.ByteBuffer src) {
                nextWritten[0] |= pos == nextCopy;
                super.write(pos, src);
            }

            @Override
            public void sync() {
                if (nextWritten[0]) {
                    throw new SimulatedCrashException("power lost at the sync after checkpoint n + 1");
                }
                super.sync();
            }
        };
        // The open recovers, then writes what recovery owes: checkpoint n + 1 among it, then a sync.
        assertThrows(SimulatedCrashException.class, () -> Heap.open(cutAfterNext, HeapFixture.options(m), null));
        assertTrue(nextWritten[0], "checkpoint n + 1 was written");
        second.crashKeeping(pos -> pos == nextCopy); // n + 1 torn, n dropped unless synced before
        Checkpoint left = Checkpoint.read(mem, HeapFixture.HEAP_OFFSET);
        assertTrue(left != null && left.sequence >= n.sequence, "checkpoint " + n.sequence + " or later survives: "
                + (left == null ? "none valid" : "found " + left.sequence));
    }

    /** A heap of 20 blocks, synced twice, then every other one freed (a head changed, not synced). */
    private static Heap withFreedBlocks(BlockDevice dev, StorageMethod m) {
        Heap h = Heap.create(dev, HeapFixture.options(m));
        long[] ids = new long[20];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = h.allocate(HeapFixture.payload(i, 300 + 100 * i));
        }
        h.sync();
        h.sync();
        for (int i = 0; i < ids.length; i += 2) {
            h.free(ids[i]);
        }
        return h;
    }
}
