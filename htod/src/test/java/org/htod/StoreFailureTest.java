package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.htod.core.DeviceFailedException;
import org.htod.core.HtodException;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link HtodStore#failure()}: empty while the store takes changes, also after a failure it gets
 * over; the latched failure once it refuses every change until reopened, and that failure is what
 * the refusals are caused by.
 */
class StoreFailureTest {
    private static final int KEYS = 50;

    private static HtodStore open(FaultyDevice dev, boolean direct) {
        return TestStores.small(dev).directMode(direct).durability(Durability.SYNC).open();
    }

    private static HtodMap<String, String> filled(HtodStore s) {
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        for (int i = 0; i < KEYS; i++) {
            m.put("k" + i, "v" + i);
        }
        return m;
    }

    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aHealthyStoreHasNoFailure(boolean direct) {
        FaultyDevice dev = new FaultyDevice(new MemoryDevice());
        try (HtodStore s = open(dev, direct)) {
            assertEquals(Optional.empty(), s.failure());
            HtodMap<String, String> m = filled(s);
            m.remove("k0");
            s.sync();
            assertEquals(Optional.empty(), s.failure());
        }
    }

    /**
     * Log mode: a sync that fails once, the device then syncing again, is a failure the store
     * gets over: the next change heals the log, and none is reported.
     */
    @Test
    void aLogSyncThatFailedOnceIsNoFailure() {
        FaultyDevice dev = new FaultyDevice(new MemoryDevice());
        try (HtodStore s = open(dev, false)) {
            HtodMap<String, String> m = filled(s);
            dev.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
            // The writer's commit meets the fault, or the flusher does: either way it is spent.
            for (int i = 0; dev.faultsRaised() == 0; i++) {
                try {
                    m.put("w" + i, "x");
                } catch (HtodException expected) {
                    // the log dropped the record; the next change heals it
                }
            }
            assertEquals(Optional.empty(), s.failure());
            m.put("after", "y");
            assertEquals("y", m.get("after"));
            assertEquals(Optional.empty(), s.failure());
        }
    }

    /**
     * Log mode: a sync fails, and the device refuses every sync since, as a file does. The next
     * change's heal meets the refusal: from then on the store reports it and refuses changes with
     * it as their cause, while reads go on.
     */
    @Test
    void aFailedLogSyncOnADeviceThatRefusesSyncsSinceIsReported() {
        FaultyDevice dev = new FaultyDevice(new MemoryDevice());
        try (HtodStore s = open(dev, false)) {
            HtodMap<String, String> m = filled(s);
            dev.failSyncLatching(1);
            assertThrows(HtodException.class, () -> m.put("a", "1"), "its commit's sync fails, or is refused");
            assertThrows(HtodException.class, () -> m.put("b", "2"), "the heal's sync is refused");
            HtodException f = s.failure().orElseThrow(() -> new AssertionError("no failure reported after the refusal"));
            assertInstanceOf(DeviceFailedException.class, f);
            HtodException refused = assertThrows(HtodException.class, () -> m.put("c", "3"));
            assertTrue(causedBy(refused, f), "the refusal " + refused + " is caused by " + f);
            assertEquals("v1", m.get("k1"), "reads go on");
        } catch (HtodException closeFailed) {
            // the close cannot sync: the next open recovers
        }
    }

    /**
     * Direct mode: a remove whose n-th device write fails, for each of its writes; then the device
     * works again. A failure is reported exactly when the store then refuses a change, and it is
     * that refusal's cause: a failed free of the removed entry's block leaves the heap's free
     * lists in doubt until a reopen.
     */
    @Test
    void aFailedHeapWriteInDirectModeIsReportedWhenTheStoreRefusesChanges() {
        int latched = 0;
        int wentOn = 0;
        for (int n = 1; n <= 16; n++) {
            FaultyDevice dev = new FaultyDevice(new MemoryDevice());
            HtodStore s = open(dev, true);
            try {
                HtodMap<String, String> m = filled(s);
                dev.failWrite(n, FaultyDevice.Fault.IO_ERROR, false);
                try {
                    m.remove("k7");
                } catch (HtodException expected) {
                    // the fault, met by the remove
                }
                if (dev.faultsRaised() == 0) {
                    break; // the remove writes fewer than n times
                }
                dev.heal(); // the device works again: what the store refuses now, it refuses for itself
                Optional<HtodException> f = s.failure();
                HtodException refused = null;
                try {
                    m.put("new", "z");
                } catch (HtodException e) {
                    refused = e;
                }
                if (f.isPresent()) {
                    latched++;
                    assertTrue(refused != null && causedBy(refused, f.get()), "write " + n + ": failure " + f.get()
                            + " reported, the next change " + (refused == null ? "made" : "refused with " + refused));
                    assertSame(f.get(), s.failure().orElseThrow(), "write " + n + ": the failure stays as it was");
                } else {
                    wentOn++;
                    assertEquals(null, refused, "write " + n + ": refused with no failure reported");
                }
            } finally {
                try {
                    s.close();
                } catch (HtodException e) {
                    // closed without a clean shutdown after the failure
                }
            }
        }
        assertTrue(latched > 0, "some failed write of a remove left the heap refusing changes");
        assertTrue(wentOn > 0, "some failed write of a remove was undone, the store going on");
    }

    private static boolean causedBy(Throwable e, Throwable cause) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t == cause) {
                return true;
            }
        }
        return false;
    }
}
