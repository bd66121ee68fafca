package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.table.HashtableOnDisk;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A log-mode store whose heap reached its bound makes room by removals, in the same instance:
 * puts fail with {@link StoreFullException} once the heap is full and the flusher cannot install
 * what waits; the user then removes most keys, every removal must be taken, and puts must succeed
 * again once the flusher has installed the removals. Then the store closes and reopens (or the
 * power fails and it recovers) with every acknowledged change, and verifies. Three ways to be
 * full: the log full of puts the heap has no room for (a large write buffer); the write buffer
 * full of them; and the write buffer full while the table's doubling is due, its new bucket array
 * the allocation the heap fails first.
 */
class FullStoreMakesRoomTest {
    /** Most puts a store takes before it is full: far more than any of these heaps holds. */
    private static final int MOST_PUTS = 20_000;

    @ParameterizedTest(name = "crash at the end: {0}")
    @ValueSource(booleans = {false, true})
    @Timeout(120)
    void logFullOfPutsTheHeapCannotHold(boolean crash) {
        fillRemoveAndPutAgain(b -> b.heapCapacity(1 << 20).bufferSize(64L << 20), 400, crash, false);
    }

    @ParameterizedTest(name = "crash at the end: {0}")
    @ValueSource(booleans = {false, true})
    @Timeout(120)
    void writeBufferFullOfPutsTheHeapCannotHold(boolean crash) {
        fillRemoveAndPutAgain(b -> b.heapCapacity(256 << 10).bufferSize(64 << 10), 400, crash, false);
    }

    @ParameterizedTest(name = "crash at the end: {0}")
    @ValueSource(booleans = {false, true})
    @Timeout(120)
    void heapTooFullForADoublingsArray(boolean crash) {
        // Small entries: a doubled bucket array (16 bytes a bucket) outgrows what the heap has left
        // before the entries do. The capacity is one where the table is due to double when the
        // heap is full, less what it keeps for checkpoints (from 216 to 296 KiB, in steps of 8).
        fillRemoveAndPutAgain(b -> b.heapCapacity(256 << 10).bufferSize(64 << 10), 8, crash, true);
    }

    private static Htod.Builder builder(CrashDevice dev, UnaryOperator<Htod.Builder> options) {
        return options.apply(Htod.builder(dev).grain(64).logSize(1 << 20).durability(Durability.SYNC));
    }

    private static byte[] value(String key, int len) {
        byte[] v = new byte[len];
        Arrays.fill(v, (byte) key.hashCode());
        return v;
    }

    private static void fillRemoveAndPutAgain(UnaryOperator<Htod.Builder> options, int valueBytes, boolean crash,
            boolean doublingDue) {
        MemoryDevice mem = new MemoryDevice();
        CrashDevice dev = new CrashDevice(mem);
        HtodStore s = builder(dev, options).open();
        Map<String, byte[]> model = new HashMap<>();
        try {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            int n = 0;
            HtodException full = null;
            for (; n < MOST_PUTS && full == null; n++) {
                String k = "k" + n;
                try {
                    m.put(k, value(k, valueBytes));
                    model.put(k, value(k, valueBytes));
                } catch (HtodException e) {
                    full = e;
                }
            }
            HtodException first = full;
            assertInstanceOf(StoreFullException.class, first, () -> "puts fail once the heap is full: " + first);
            if (doublingDue) {
                HashtableOnDisk t = table(s, "m");
                long coming = LogStores.layer(s).mob.delta(t.tableId(), false, null);
                assertTrue(t.doublingDue(Math.max(0, coming)), "a doubling is due when the store is full");
            }
            // Every key but the newest quarter removed: the store holds far less than its bound then.
            int acknowledged = model.size();
            makeRoom(m, model, k -> value(k, valueBytes), "a full store", "");
            check(m, model, "in the same instance");
            if (crash) {
                dev.crash(0x5eedL + acknowledged);
            } else {
                s.close();
            }
        } finally {
            if (crash) {
                LogStores.closeQuietly(s);
            }
        }
        try (HtodStore again = builder(new CrashDevice(mem.reopen()), options).open()) {
            if (!crash) {
                assertTrue(again.recoveryReport().clean(), "a clean close: " + again.recoveryReport());
            }
            check(again.map("m", Codec.string(), Codec.bytes()), model, crash ? "after a crash" : "after a reopen");
            LogStores.verify(again);
        }
    }

    private static HashtableOnDisk table(HtodStore s, String name) {
        for (HashtableOnDisk t : LogStores.layer(s).tables().maps()) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        return fail("no table " + name);
    }

    /**
     * Removes the oldest three quarters of the {@code model.size()} keys {@code k0, k1, ...} of a
     * full store, then puts an eighth as many new ones ({@code again0, ...}): each must succeed,
     * and a failure names the key, how far it came and in what {@code store}.
     */
    static void makeRoom(HtodMap<String, byte[]> m, Map<String, byte[]> model, Function<String, byte[]> value,
            String store, String where) {
        int acknowledged = model.size();
        for (int i = 0; i < acknowledged * 3 / 4; i++) {
            String k = "k" + i;
            try {
                assertArrayEquals(value.apply(k), m.remove(k), k);
            } catch (HtodException e) {
                throw new AssertionError("removing " + k + " (" + i + " of " + acknowledged * 3 / 4
                        + ") of " + store + ": " + e, e);
            }
            model.remove(k);
        }
        for (int i = 0; i < acknowledged / 8; i++) {
            String k = "again" + i;
            try {
                m.put(k, value.apply(k));
            } catch (HtodException e) {
                throw new AssertionError("putting " + k + " after " + acknowledged * 3 / 4
                        + " removals made room" + where + ": " + e, e);
            }
            model.put(k, value.apply(k));
        }
    }

    private static void check(HtodMap<String, byte[]> m, Map<String, byte[]> model, String when) {
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            assertArrayEquals(e.getValue(), m.get(e.getKey()), when + ": " + e.getKey());
        }
        assertEquals(model.size(), m.size(), when + ": size");
        int seen = 0;
        for (String k : m.keySet()) {
            assertTrue(model.containsKey(k), when + ": " + k + " was removed");
            seen++;
        }
        assertEquals(model.size(), seen, when + ": keys iterated");
        assertNull(m.get("k0"), when + ": k0 was removed");
    }
}
