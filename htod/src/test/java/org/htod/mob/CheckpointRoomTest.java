package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;
import org.htod.core.alloc.Heap;
import org.htod.core.container.Superblock;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The room a log-mode heap keeps at its end for checkpoints' blocks follows the size of their
 * records: three blocks of a quarter more than the latest record (and the acceptable waste), no
 * fixed allowance that makes it a fifth of a small heap; grown at once by a checkpoint whose
 * snapshot outgrew it, before that checkpoint looks for its block, and smaller again once the
 * records are. Values placed by writers stand in here for the free blocks that grow a snapshot:
 * each is a block the snapshot counts free (its install has not recorded it).
 */
class CheckpointRoomTest {
    private static final long HEAP = 256 << 10;

    private static HtodStore open(MemoryDevice mem) {
        return Htod.builder(mem).grain(64).logSize(1 << 20).heapCapacity(HEAP).bufferSize(64 << 10)
                .durability(Durability.SYNC).open();
    }

    /** Bytes of the record of the checkpoint in force, as the superblock names it. */
    private static long record(WriteLayer layer) {
        return layer.storage().superblock().snapshotLength();
    }

    @Test
    @Timeout(60)
    void theRoomIsSizedByTheCheckpointsRecord() {
        try (HtodStore s = open(new MemoryDevice())) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 100; i++) {
                m.put("k" + i, "v" + i);
            }
            s.checkpoint();
            WriteLayer layer = LogStores.layer(s);
            long kept = layer.storage().heap().keptForCheckpoints();
            long rec = record(layer);
            assertTrue(kept >= 3 * rec, "kept " + kept + " for a checkpoint of " + rec + " bytes");
            assertTrue(kept <= HEAP / 32, "kept " + kept + " of a heap of " + HEAP + " for a checkpoint of " + rec + " bytes");
        }
    }

    @Test
    @Timeout(60)
    void aCheckpointThatOutgrewTheRoomGrowsItAndTheNextFindsRoom() {
        MemoryDevice mem = new MemoryDevice();
        try (HtodStore s = open(mem)) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 100; i++) {
                m.put("k" + i, "v" + i);
            }
            s.checkpoint();
            WriteLayer layer = LogStores.layer(s);
            Heap heap = layer.storage().heap();
            long keptBefore = heap.keptForCheckpoints();
            layer.installLock().lock(); // the flusher's checkpoints wait: these are the test's own
            List<Long> placed = new ArrayList<>();
            try {
                // Values placed until the heap has no room left outside the room kept: each adds
                // 12 bytes to the next snapshot, far more in all than the room was sized for.
                fill(heap, placed);
                StoreFullException noRoom = assertThrows(StoreFullException.class, () -> layer.installs.checkpoint(false));
                assertTrue(noRoom.heapHasNoRoom(), noRoom.getMessage());
                long grown = heap.keptForCheckpoints();
                assertTrue(grown > 4 * keptBefore, "the room grew from " + keptBefore + " to " + grown
                        + " bytes for a checkpoint of " + placed.size() * 12 + " bytes more");
                // The values placed in the grown room's bytes are given back, and writers place
                // others: the bytes stay for the checkpoint, which finds its block now.
                long bound = heapEnd(heap) - grown;
                for (int i = placed.size() - 1; i >= 0; i--) {
                    long b = placed.get(i);
                    if (heap.address(b) + heap.blockSize(b) > bound) {
                        heap.unrecorded().release(b);
                        placed.remove(i);
                    }
                }
                fill(heap, placed);
                long taken = layer.stats().checkpoints;
                layer.installs.checkpoint(false);
                assertEquals(taken + 1, layer.stats().checkpoints, "the checkpoint after the room grew");
                // Given back, the values leave a small snapshot, and the room follows it down.
                for (long b : placed) {
                    heap.unrecorded().release(b);
                }
                layer.installs.checkpoint(false);
                layer.installs.checkpoint(false);
                assertTrue(heap.keptForCheckpoints() <= HEAP / 32, "kept " + heap.keptForCheckpoints()
                        + " after the snapshot shrank to " + record(layer) + " bytes");
            } finally {
                layer.installLock().unlock();
            }
            for (int i = 0; i < 100; i++) {
                assertEquals("v" + i, m.get("k" + i));
            }
            LogStores.verify(s);
        }
        try (HtodStore again = open(mem.reopen())) {
            HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 100; i++) {
                assertEquals("v" + i, m.get("k" + i));
            }
            LogStores.verify(again);
        }
    }

    /** Fails every write of the superblock while {@link #failing}: a checkpoint's last step. */
    private static final class SuperblockFaults extends ForwardingDevice {
        volatile boolean failing;

        SuperblockFaults(MemoryDevice inner) {
            super(inner);
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            if (failing && pos < Superblock.LOG_OFFSET) {
                throw new HtodIOException("write of the superblock at offset " + pos, new IOException("injected"));
            }
            super.write(pos, src);
        }
    }

    /**
     * A checkpoint whose superblock update failed keeps its block until a later one lands (a copy
     * naming it may be on disk), beside the one in force: in a full heap both lie in the room. The
     * room of three blocks and the acceptable waste takes three such when the records are small;
     * sized with a fixed allowance of 12 KiB for placed values, its blocks were so large that the
     * fourth checkpoint found none after three failures.
     */
    @Test
    @Timeout(60)
    void checkpointsWhoseSuperblockFailedKeepTheirBlocksAndTheNextFindsRoomInAFullHeap() {
        MemoryDevice mem = new MemoryDevice();
        SuperblockFaults dev = new SuperblockFaults(mem);
        int acknowledged = 0;
        try (HtodStore s = Htod.builder(dev).grain(64).logSize(1 << 20).heapCapacity(HEAP).bufferSize(64 << 10)
                .durability(Durability.SYNC).open()) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            try {
                for (; acknowledged < 20_000; acknowledged++) {
                    m.put("k" + acknowledged, new byte[400]);
                }
            } catch (StoreFullException full) {
                // the heap is full: its checkpoints' blocks go in the room kept
            }
            WriteLayer layer = LogStores.layer(s);
            layer.installLock().lock(); // the flusher's checkpoints wait: these are the test's own
            try {
                dev.failing = true;
                for (int i = 0; i < 3; i++) {
                    HtodIOException failed = assertThrows(HtodIOException.class, () -> layer.installs.checkpoint(false));
                    assertTrue(failed.getMessage().contains("superblock"), failed.getMessage());
                }
                dev.failing = false;
                long taken = layer.stats().checkpoints;
                layer.installs.checkpoint(false);
                layer.installs.checkpoint(false);
                assertEquals(taken + 2, layer.stats().checkpoints, "checkpoints after three failed at the superblock");
            } finally {
                dev.failing = false;
                layer.installLock().unlock();
            }
            for (int i = 0; i < acknowledged * 3 / 4; i++) {
                m.remove("k" + i);
            }
            s.checkpoint();
            LogStores.verify(s);
        }
        try (HtodStore again = open(mem.reopen())) {
            HtodMap<String, byte[]> m = again.map("m", Codec.string(), Codec.bytes());
            for (int i = 0; i < acknowledged; i++) {
                byte[] v = m.get("k" + i);
                assertEquals(i >= acknowledged * 3 / 4, v != null && v.length == 400, "k" + i);
            }
            LogStores.verify(again);
        }
    }

    /** Places 16-byte values as writers do until the heap refuses one, for want of room. */
    private static void fill(Heap heap, List<Long> placed) {
        while (true) {
            try {
                placed.add(heap.allocateUnrecorded(ByteBuffer.allocate(16)));
            } catch (StoreFullException full) {
                assertTrue(full.heapHasNoRoom(), full.getMessage());
                return;
            }
        }
    }

    private static long heapEnd(Heap heap) {
        return heap.firstBlock() + heap.stats().capacityBytes();
    }
}
