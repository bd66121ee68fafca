package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A {@code sync()} that begins while the log has healed but the write layer has not yet logged
 * again the changes the failure dropped: it returns only once they are logged again and durable.
 * It used to find the log healed, commit what the log held then and return, so that a change
 * acknowledged before the sync began was lost in a crash after it returned (seen once in about
 * 36,000 {@code FailedWritesCrashTest} points with three writers at ASYNC: "k1 holds null,
 * acknowledged v1.1620-xxx3").
 *
 * <p>The heal and its relog are held apart here by a writer inside a {@code compute} function,
 * which holds the layer's append guard (the relog waits for every writer in the middle of a
 * change), so the sync is sure to begin between them.
 */
class SyncDuringRelogTest {
    @Test
    void aSyncBetweenAHealAndItsRelogWaitsForTheRelog() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk);
        FaultyDevice faults = new FaultyDevice(crash);
        HtodStore s = Htod.builder(faults).grain(64).logSize(1 << 20).durability(Durability.NONE).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        s.sync();
        m.put("k1", "v1"); // acknowledged at NONE: in the buffer and the log's memory

        // A writer stops inside its compute function, holding the append guard's read side.
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        Thread computing = new Thread(() -> m.compute("k9", (k, v) -> {
            inside.countDown();
            awaitQuietly(goOn);
            return "c";
        }), "computing");
        computing.start();
        assertTrue(inside.await(1, TimeUnit.MINUTES));

        faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(HtodException.class, s::sync, "the sync that drops k1's record");
        WriteLayer layer = LogStores.layer(s);
        assertTrue(layer.log.failed());

        // Another writer heals the log; its relog of k1 then waits for the computing writer.
        Thread healing = new Thread(() -> m.put("k2", "v2"), "healing");
        healing.start();
        while (layer.log.failed()) {
            assertTrue(healing.isAlive(), "the healing writer ended without healing");
            Thread.sleep(1);
        }

        // The sync begins now, after the heal and before the relog, and k1 was acknowledged before it.
        HtodException[] syncFailed = new HtodException[1];
        Thread syncing = new Thread(() -> {
            try {
                s.sync();
            } catch (HtodException e) {
                syncFailed[0] = e;
            }
        }, "syncing");
        syncing.start();
        // It returns at once (the bug), or waits for the relog (parked on the log).
        while (syncing.isAlive() && syncing.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        boolean returnedBeforeRelog = !syncing.isAlive();
        goOn.countDown();
        for (Thread t : new Thread[] {computing, healing, syncing}) {
            t.join(TimeUnit.MINUTES.toMillis(1));
            assertFalse(t.isAlive(), t.getName() + " still runs");
        }
        assertEquals(null, syncFailed[0], "the sync after the heal");

        // The power goes: only what a sync made durable is on the disk.
        crash.crashKeeping(at -> false);
        LogStores.closeQuietly(s);
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals("v1", r.get("k1"), "k1, acknowledged before a sync that returned"
                    + (returnedBeforeRelog ? " (the sync returned before the relog)" : ""));
            LogStores.verify(again);
        }
    }

    /**
     * A function given to {@code compute} runs holding its key's lock and the append guard, for
     * which a heal's relog waits: a sync from inside it, which waits for a relog, is refused
     * rather than left to deadlock with a heal, as a write of its own key is; the map and the
     * store go on.
     */
    @Test
    void aComputeFunctionMayNeitherSyncTheStoreNorWriteItsKey() {
        try (HtodStore s = Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20).durability(Durability.NONE)
                .open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            assertThrows(IllegalStateException.class, () -> m.compute("k", (k, v) -> {
                s.sync();
                return "synced inside";
            }));
            assertThrows(IllegalStateException.class, () -> m.compute("k", (k, v) -> {
                m.put(k, "written inside");
                return "x";
            }));
            assertEquals(null, m.get("k"), "neither function's change was made");
            m.compute("k", (k, v) -> "after");
            s.sync();
            assertEquals("after", m.get("k"));
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            if (!l.await(1, TimeUnit.MINUTES)) {
                throw new AssertionError("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
