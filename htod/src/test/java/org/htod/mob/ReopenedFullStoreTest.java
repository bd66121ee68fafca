package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A log-mode store reopened already full to its heap's bound makes room by removals in the
 * reopened instance, as one that filled while open does ({@link FullStoreMakesRoomTest}). The
 * heap's room for checkpoints lives in memory only: a reopen finds entries where the room is
 * kept, placed there before it was, and its checkpoints must still find their blocks, so that
 * the log that holds the removals is given back.
 */
class ReopenedFullStoreTest {
    private static final int VALUE = 400;

    private static Htod.Builder builder(CrashDevice dev) {
        return Htod.builder(dev).grain(64).logSize(1 << 20).heapCapacity(256 << 10).bufferSize(64 << 10)
                .durability(Durability.SYNC);
    }

    private static byte[] value(String key) {
        byte[] v = new byte[VALUE];
        Arrays.fill(v, (byte) key.hashCode());
        return v;
    }

    @ParameterizedTest(name = "crash before the reopen: {0}")
    @ValueSource(booleans = {false, true})
    @Timeout(120)
    void aStoreReopenedFullMakesRoomByRemovals(boolean crash) {
        MemoryDevice mem = new MemoryDevice();
        CrashDevice dev = new CrashDevice(mem);
        Map<String, byte[]> model = new HashMap<>();
        HtodStore s = builder(dev).open();
        try {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            HtodException full = null;
            for (int n = 0; n < 20_000 && full == null; n++) {
                String k = "k" + n;
                try {
                    m.put(k, value(k));
                    model.put(k, value(k));
                } catch (HtodException e) {
                    full = e;
                }
            }
            StoreFullException first = assertInstanceOf(StoreFullException.class, full, "puts fail once the heap is full");
            // The writer's failure, for want of room in the buffer, says why the flusher cannot empty it.
            StoreFullException heapFull = assertInstanceOf(StoreFullException.class, first.getCause(), first.getMessage());
            assertTrue(heapFull.heapHasNoRoom(), heapFull.getMessage());
        } finally {
            if (crash) {
                dev.crash(0xF011L + model.size());
            }
            // A close of a full store cannot install what its buffer holds: the reopen replays it.
            LogStores.closeQuietly(s);
        }
        try (HtodStore again = builder(new CrashDevice(mem.reopen())).open()) {
            HtodMap<String, byte[]> m = again.map("m", Codec.string(), Codec.bytes());
            WriteLayer layer = LogStores.layer(again);
            long checkpointsBefore = layer.stats().checkpoints;
            FullStoreMakesRoomTest.makeRoom(m, model, ReopenedFullStoreTest::value, "a store reopened full",
                    " in a store reopened full");
            // Checkpoints go on in this instance, each giving the log back: no second reopen needed.
            for (int i = 0; i < 4; i++) {
                again.checkpoint();
            }
            assertTrue(layer.stats().checkpoints >= checkpointsBefore + 4, "checkpoints after the reopen: "
                    + layer.stats().checkpoints + ", from " + checkpointsBefore);
            check(m, model, "in the reopened instance");
            LogStores.verify(again);
        }
        try (HtodStore third = builder(new CrashDevice(mem.reopen())).open()) {
            assertTrue(third.recoveryReport().clean(), "a clean close: " + third.recoveryReport());
            check(third.map("m", Codec.string(), Codec.bytes()), model, "after the next reopen");
            LogStores.verify(third);
        }
    }

    private static void check(HtodMap<String, byte[]> m, Map<String, byte[]> model, String when) {
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            assertArrayEquals(e.getValue(), m.get(e.getKey()), when + ": " + e.getKey());
        }
        assertEquals(model.size(), m.size(), when + ": size");
    }
}
