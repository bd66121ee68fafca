package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.ReachableBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A closed store that the application still refers to, with a map of it, holds no memory worth
 * speaking of: not the log's buffers, the write buffer's changes, the entry and slot caches, nor
 * the device it was opened on (a memory device's bytes, a read-only open's overlay). Each kept
 * about a megabyte per store with a 1 MiB log, and Guava testlib's contract suite, which keeps
 * every test's map, ran out of a 6 GiB heap. Measured by walking the object graph from the store
 * and its map ({@link ReachableBytes}): no timing, no garbage collector. The device given to the
 * builder keeps its bytes all the same, for the store to be opened again on it; and every
 * operation of the closed store still says it is closed.
 */
class ClosedStoreMemoryTest {
    private static final int ENTRIES = 2_000;
    /** The bound: a closed store's fixed structures (the entry cache's empty index, locks), a few KiB. */
    private static final long MOST = 64 << 10;

    private static Htod.Builder builder(BlockDevice dev, boolean direct) {
        return Htod.builder(dev).grain(64).logSize(1 << 20).bufferSize(1 << 20).directMode(direct)
                .durability(Durability.NONE);
    }

    /** A value of about 100 bytes: the write buffer and the entry cache hold some 200 KB of them. */
    private static String value(int i) {
        return ("value " + i + " ").repeat(10);
    }

    private static void fill(HtodMap<Integer, String> m) {
        for (int i = 0; i < ENTRIES; i++) {
            m.put(i, value(i));
        }
        for (int i = 0; i < ENTRIES; i++) {
            assertEquals(value(i), m.get(i)); // the entry cache filled
        }
    }

    /** Asserts that at most {@link #MOST} bytes of arrays and buffers are reachable from {@code roots}. */
    private static void holdsLittle(String what, Object... roots) {
        ReachableBytes r = ReachableBytes.from("held", List.of(roots));
        System.out.println(what + ": " + r.total() + " bytes reachable");
        assertTrue(r.total() <= MOST, what + " holds at most " + MOST + " bytes of arrays and buffers (held{0}: the"
                + " store, held{1}: its map), found " + r);
    }

    /** Every operation of a closed store and of its map throws {@link StoreClosedException}, as it always did. */
    private static void refusesEverything(HtodStore s, HtodMap<Integer, String> m) {
        assertThrows(StoreClosedException.class, () -> m.get(1));
        assertThrows(StoreClosedException.class, () -> m.containsKey(1));
        assertThrows(StoreClosedException.class, () -> m.put(1, "x"));
        assertThrows(StoreClosedException.class, () -> m.remove(1));
        assertThrows(StoreClosedException.class, () -> m.compute(1, (k, v) -> "y"));
        assertThrows(StoreClosedException.class, m::size);
        assertThrows(StoreClosedException.class, () -> m.entrySet().iterator().hasNext());
        assertThrows(StoreClosedException.class, () -> m.keySet().iterator().hasNext());
        assertThrows(StoreClosedException.class, m::clear);
        assertThrows(StoreClosedException.class, s::stats);
        assertThrows(StoreClosedException.class, s::verify);
        assertThrows(StoreClosedException.class, s::sync);
        assertThrows(StoreClosedException.class, s::checkpoint);
        assertThrows(StoreClosedException.class, s::mapNames);
        assertThrows(StoreClosedException.class, () -> s.map("m", Codec.ints(), Codec.string()));
        assertThrows(StoreClosedException.class, () -> s.entries("m"));
        assertNotNull(s.recoveryReport());
        assertFalse(s.toString().isEmpty());
        s.close(); // again: nothing to do
    }

    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aClosedStoreAndItsMapHoldLittle(boolean direct) {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = builder(disk, direct).open();
        HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
        fill(m);
        long maxValue = s.maxValueBytes();
        s.close();
        holdsLittle("a closed store (direct mode " + direct + ")", s, m, m.entrySet(), m.keySet(), m.values());
        refusesEverything(s, m);
        assertEquals(maxValue, s.maxValueBytes());
        try (HtodStore again = builder(disk.reopen(), direct).open()) {
            assertTrue(again.recoveryReport().clean(), "the device kept its bytes: " + again.recoveryReport());
            HtodMap<Integer, String> r = again.map("m", Codec.ints(), Codec.string());
            assertEquals(ENTRIES, r.size());
            assertEquals(value(7), r.get(7));
        }
    }

    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aClosedReadOnlyStoreHoldsNeitherItsOverlayNorItsDevice(boolean direct) {
        MemoryDevice disk = new MemoryDevice();
        try (HtodStore s = builder(disk, direct).open()) {
            fill(s.map("m", Codec.ints(), Codec.string()));
        }
        HtodStore r = builder(disk.reopen(), direct).readOnly(true).open();
        HtodMap<Integer, String> m = r.map("m", Codec.ints(), Codec.string());
        for (int i = 0; i < ENTRIES; i++) {
            assertEquals(value(i), m.get(i));
        }
        r.close();
        holdsLittle("a closed read-only store (direct mode " + direct + ")", r, m);
        refusesEverything(r, m);
        try (HtodStore again = builder(disk.reopen(), direct).open()) {
            assertEquals(ENTRIES, again.map("m", Codec.ints(), Codec.string()).size());
        }
    }

    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aStoreClosedAfterItsDeviceFailedHoldsLittle(boolean direct) {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(disk);
        HtodStore s = builder(dev, direct).durability(Durability.SYNC).open();
        HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
        fill(m);
        dev.failSyncLatching(1); // as a file device: every sync after it refused
        boolean refused = false;
        for (int i = 0; i < ENTRIES && !refused; i++) {
            try {
                m.put(i, "changed " + i);
            } catch (HtodException e) {
                refused = true; // the failed sync's; every change from here on is refused
            }
        }
        assertTrue(refused && dev.faultsRaised() > 0, "the armed sync failed");
        try {
            s.close();
        } catch (HtodException e) {
            // closed without a clean shutdown: the next open recovers
        }
        holdsLittle("a store closed after its device failed (direct mode " + direct + ")", s, m);
        refusesEverything(s, m);
        try (HtodStore again = builder(disk.reopen(), direct).open()) {
            assertEquals(ENTRIES, again.map("m", Codec.ints(), Codec.string()).size());
            TestStores.verify(again);
        }
    }

    @Test
    void theWalkCountsWhatAnOpenStoreHolds() {
        // The bound means something: open, the same store holds its log's buffers and its device's bytes.
        MemoryDevice disk = new MemoryDevice();
        try (HtodStore s = builder(disk, true).open()) {
            HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
            fill(m);
            long held = ReachableBytes.from("an open store", List.of(s, m)).total();
            assertTrue(held > 8 * MOST, "an open store holds its device's bytes: " + held);
        }
    }
}
