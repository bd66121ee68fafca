package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.htod.core.HtodException;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Direct mode at ASYNC, when a background sync fails: the syncs go on at their interval (a task
 * that threw would end the schedule, and with it every later background sync, silently), and
 * until one succeeds a write first tries a sync itself and, if that fails too, is refused with the
 * device's error, unmade, instead of being acknowledged with no sync to come. Once the device
 * recovers the same store goes on, and a power cut loses nothing the syncs covered.
 *
 * <p>Liveness, not time: a test waits (up to a minute) for the background syncs it needs, which
 * take milliseconds when they come.
 */
class AsyncBackgroundFailureTest {
    private final MemoryDevice disk = new MemoryDevice();
    private final CrashDevice crash = new CrashDevice(disk);
    private final FaultyDevice faults = new FaultyDevice(crash);
    private final CountingDevice counted = new CountingDevice(faults);

    private HtodStore open() {
        return TestStores.small(counted).directMode(true).durability(Durability.ASYNC)
                .syncInterval(Duration.ofMillis(2)).open();
    }

    @Test
    void aFailedBackgroundSyncIsTriedAgain() {
        HtodStore store = open();
        HtodMap<String, String> m = store.map("m", Codec.string(), Codec.string());
        m.put("k0", "v0"); // its entry is written; its link waits for a background sync
        faults.failWrite(1, FaultyDevice.Fault.IO_ERROR, false); // the next write: that sync's link
        awaitTrue(() -> faults.faultsRaised() == 1, "a background sync meets the fault");
        long after = counted.counts().syncs();
        m.put("k1", "v1");
        // a flush syncs twice (its entries, then its links): two more mean one whole sync since
        awaitTrue(() -> counted.counts().syncs() >= after + 2, "background syncs go on after a failed one");
        awaitTrue(() -> counted.counts().syncs() >= after + 4, "and on");
        crash.crash(1);
        closeCrashed(store);
        try (HtodStore again = TestStores.small(disk.reopen()).directMode(true).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals("v0", r.get("k0"), "the link the failed sync kept was written by a later one");
            assertEquals("v1", r.get("k1"));
            TestStores.verify(again);
        }
    }

    @Test
    void whileTheSyncsFailWritesAreRefusedAndNotMade() {
        HtodStore store = open();
        HtodMap<String, String> m = store.map("m", Codec.string(), Codec.string());
        m.put("k0", "v0");
        m.put("k1", "v1");
        store.sync();
        faults.failWrite(1, FaultyDevice.Fault.IO_ERROR, true); // every write fails from now on
        m.remove("k0"); // writes nothing itself at ASYNC: its link waits for a background sync
        // two background syncs meet it: the first one's failure is recorded once the second runs
        awaitTrue(() -> faults.faultsRaised() >= 2, "background syncs meet the fault");
        // A removal writes nothing itself: acknowledged now, it would wait for a sync that never
        // succeeds. It is refused instead, and the key keeps its value.
        HtodException e = assertThrows(HtodException.class, () -> m.remove("k1"));
        assertTrue(String.valueOf(e.getMessage()).contains("background sync"), e.toString());
        assertTrue(causedByInjected(e), "the device's error is the cause: " + e);
        assertEquals("v1", m.get("k1"), "the refused removal was not made");
        assertNull(m.get("k0"), "the removal acknowledged before the failure stays visible");
        faults.heal();
        awaitTrue(() -> {
            try {
                m.remove("k1");
                return true;
            } catch (HtodException refused) {
                return false; // until a sync succeeds: the next background one, or this write's own
            }
        }, "writes go on once the device recovers");
        long after = counted.counts().syncs();
        awaitTrue(() -> counted.counts().syncs() >= after + 4, "background syncs cover the removals");
        crash.crash(2);
        closeCrashed(store);
        try (HtodStore again = TestStores.small(disk.reopen()).directMode(true).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertNull(r.get("k0"));
            assertNull(r.get("k1"));
            TestStores.verify(again);
        }
    }

    private static void closeCrashed(HtodStore store) {
        try {
            store.close();
        } catch (HtodException expected) {
            // the device lost power
        }
    }

    private static boolean causedByInjected(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (String.valueOf(c.getMessage()).contains("injected")) {
                return true;
            }
        }
        return false;
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never happened: " + what);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
