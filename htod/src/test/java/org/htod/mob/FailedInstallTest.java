package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * An install of a placed value (its entry written into a heap block by its writer, the install
 * record naming the block) among ten small new values (entries the install writes), whose write
 * fails, each of the install's writes in turn, some after
 * part of their bytes landed; the key then keeps its value, or takes a new one before the install
 * is tried again. The store closes cleanly, reopens holding the key's last value, and verifies:
 * no block is left allocated that no table reaches. A failed install that had recorded the block
 * and not linked it left it recorded; once the key took a new value the block was reached by
 * nothing ({@code FailedWritesCrashTest} with placed values, about one run in two at scale 5,
 * without a test that did so every time). The flusher is kept off by holding the install lock,
 * and the test runs the installs itself.
 */
class FailedInstallTest {
    private static final int VALUE = 2000;

    @Test
    void aPlacedValueWhoseInstallFailsIsInstalledOrGivenBackLater() {
        Map<String, Integer> tally = new TreeMap<>();
        for (int n = 1; ; n++) {
            boolean met = false;
            for (int landing : new int[] {0, 512}) {
                for (boolean changed : new boolean[] {false, true}) {
                    met |= point(n, landing, changed, tally);
                }
            }
            if (!met) {
                break; // the install makes fewer than n writes
            }
        }
        System.out.println("FailedInstallTest: " + tally);
        assertTrue(tally.getOrDefault("failed install", 0) >= 8, "installs that met the fault: " + tally);
    }

    /** Returns whether the install met the fault armed at its {@code n}-th write. */
    private static boolean point(int n, int landing, boolean changed, Map<String, Integer> tally) {
        String context = "write " + n + (landing == 0 ? "" : ", " + landing + " bytes landing")
                + (changed ? ", the key changed after" : ", the key kept its value");
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        HtodStore s = Htod.builder(faults).grain(64).logSize(1 << 20).durability(Durability.SYNC)
                .placeValuesFrom(512).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        for (int i = 0; i < 20; i++) {
            m.put("other" + i, "o" + i); // entries in the table's chains, which the install relinks
        }
        s.checkpoint();
        WriteLayer layer = LogStores.layer(s);
        ReentrantLock install = layer.installLock();
        String last = value(1);
        boolean met;
        install.lock(); // the flusher waits: the installs below are this test's
        try {
            m.put("k", last);
            for (int i = 0; i < 10; i++) {
                m.put("new" + i, "n" + i); // in the same install: entries it writes, before or after k's link
            }
            int raised = faults.faultsRaised();
            faults.failWriteAfter(n, landing);
            try {
                layer.installs.installOnce();
            } catch (HtodException e) {
                assertTrue(String.valueOf(e.getMessage()).contains("injected")
                        || (e.getCause() != null && String.valueOf(e.getCause().getMessage()).contains("injected")),
                        context + ": " + e);
            }
            met = faults.faultsRaised() > raised;
            faults.heal();
            if (met) {
                tally.merge("failed install", 1, Integer::sum);
                if (changed) {
                    last = value(2);
                    m.put("k", last);
                }
            }
            while (layer.installs.installOnce()) {
                // the key's last value, and anything the failure left
            }
        } finally {
            install.unlock();
        }
        s.close();
        try (HtodStore again = Htod.builder(disk.reopen()).placeValuesFrom(512).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals(last, r.get("k"), context);
            assertEquals(31, r.size(), context);
            try {
                LogStores.verify(again);
            } catch (AssertionError e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
        return met;
    }

    private static String value(int i) {
        return (i + ":").repeat(VALUE / 2);
    }
}
