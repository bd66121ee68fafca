package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.alloc.Heap;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A log-mode checkpoint gets its new block in a heap that the flusher's installs filled with
 * entries: the heap keeps room at its end that only checkpoints take. A checkpoint allocates its
 * block before it gives back its predecessor's, and only a checkpoint gives back the log's
 * space; without that room a store full to its heap's bound could not log a removal any more, so
 * nothing could make room in it until it was reopened.
 */
class CheckpointInAFullHeapTest {
    private static byte[] value(int i) {
        byte[] v = new byte[400];
        Arrays.fill(v, (byte) i);
        return v;
    }

    @Test
    @Timeout(60)
    void checkpointsGetTheirBlockInAHeapEntriesFilled() {
        MemoryDevice mem = new MemoryDevice();
        int acknowledged = 0;
        try (HtodStore s = Htod.builder(mem).grain(64).logSize(1 << 20).heapCapacity(256 << 10).bufferSize(64 << 10)
                .durability(Durability.SYNC).open()) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            HtodException full = null;
            while (full == null && acknowledged < 20_000) {
                try {
                    m.put("k" + acknowledged, value(acknowledged));
                    acknowledged++;
                } catch (HtodException e) {
                    full = e;
                }
            }
            assertInstanceOf(StoreFullException.class, full, "puts fail once the heap is full");
            WriteLayer layer = LogStores.layer(s);
            Heap heap = layer.storage().heap();
            // No block of a checkpoint's size fits anywhere else in the heap.
            StoreFullException refused = assertThrows(StoreFullException.class,
                    () -> heap.allocate(ByteBuffer.allocate(16 << 10)));
            assertTrue(refused.heapHasNoRoom(), refused.getMessage());
            assertTrue(refused.getMessage().contains("kept for the log's checkpoints"), refused.getMessage());
            // Each checkpoint allocates its block while its predecessor's is held.
            for (int i = 0; i < 8; i++) {
                layer.installs.checkpoint(false);
            }
            for (int i = 0; i < acknowledged; i++) {
                assertArrayEquals(value(i), m.get("k" + i), "k" + i);
            }
            // Removals make room for what the buffer holds, and the store closes.
            for (int i = 0; i < acknowledged * 3 / 4; i++) {
                assertArrayEquals(value(i), m.remove("k" + i), "k" + i);
            }
        }
        try (HtodStore again = Htod.builder(mem.reopen()).grain(64).logSize(1 << 20).heapCapacity(256 << 10)
                .bufferSize(64 << 10).durability(Durability.SYNC).open()) {
            HtodMap<String, byte[]> m = again.map("m", Codec.string(), Codec.bytes());
            for (int i = 0; i < acknowledged; i++) {
                assertArrayEquals(i < acknowledged * 3 / 4 ? null : value(i), m.get("k" + i), "after a reopen: k" + i);
            }
            LogStores.verify(again);
        }
    }
}
