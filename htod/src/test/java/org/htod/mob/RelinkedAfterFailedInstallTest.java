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
 * An install whose write fails, each of its writes in turn, after it allocated new entries and
 * recorded links into them (a new entry's {@code next} set to the entry that replaced its old
 * successor); the new keys are then removed, and the next install records the failed one again
 * with them: its allocations, the links into the new entries, and the new entries' frees (the
 * removals unlinked them), all in one record. A crash after it, then a reopen. The replay redoes
 * a record's allocations before its frees, so those blocks end free, and the links into them are
 * not to be redone; they were kept, and the open then refused the store: "an install record in
 * the log links into the block at offset ... expected a block the records leave allocated"
 * ({@code FailedWritesCrashTest}, seed 4195872138, about one run in 600).
 */
class RelinkedAfterFailedInstallTest {
    private static final int OLD = 40;
    private static final int NEW = 40;

    @Test
    void entriesAllocatedAndUnlinkedBeforeTheirInstallIsRecordedAgainReplay() {
        Map<String, Integer> tally = new TreeMap<>();
        for (int n = 1; ; n++) {
            if (!point(n, tally)) {
                break; // the install makes fewer than n writes
            }
        }
        System.out.println("RelinkedAfterFailedInstallTest: " + tally);
        assertTrue(tally.getOrDefault("failed install", 0) >= 2, "installs that met the fault: " + tally);
    }

    /** Returns whether the install met the fault armed at its {@code n}-th write. */
    private static boolean point(int n, Map<String, Integer> tally) {
        String context = "write " + n + " of the install failed";
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        HtodStore s = Htod.builder(faults).grain(64).logSize(1 << 20).durability(Durability.SYNC).open();
        Map<String, String> expected = new TreeMap<>();
        boolean met;
        MemoryDevice crashed;
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < OLD; i++) {
                m.put("old" + i, "o" + i);
                expected.put("old" + i, "o" + i);
            }
            s.checkpoint();
            WriteLayer layer = LogStores.layer(s);
            ReentrantLock install = layer.installLock();
            install.lock(); // the flusher waits: the installs below are this test's
            try {
                // One install: new entries at the heads of the chains, each in front of an old
                // entry that the same install replaces, so that the new entry's next is linked
                // to the replacement.
                for (int i = 0; i < NEW; i++) {
                    m.put("new" + i, "n" + i);
                }
                for (int i = 0; i < OLD; i++) {
                    m.put("old" + i, "p" + i);
                    expected.put("old" + i, "p" + i);
                }
                int raised = faults.faultsRaised();
                faults.failWrite(n, FaultyDevice.Fault.IO_ERROR, false);
                try {
                    while (layer.installs.installOnce()) {
                        // until the buffer is empty or the fault is met
                    }
                } catch (HtodException e) {
                    // the fault
                }
                met = faults.faultsRaised() > raised;
                faults.heal();
                if (!met) {
                    return false;
                }
                tally.merge("failed install", 1, Integer::sum);
                for (int i = 0; i < NEW; i++) {
                    m.remove("new" + i); // unlinks the new entries before their install is recorded again
                }
                while (layer.installs.installOnce()) {
                    // the failed install again, with the removals
                }
            } finally {
                install.unlock();
            }
            crashed = LogStores.copy(disk); // a power cut now: every write landed, no checkpoint since
        } finally {
            LogStores.closeQuietly(s);
        }
        try (HtodStore again = Htod.builder(crashed).durability(Durability.SYNC).open()) {
            assertEquals(expected.keySet(), LogStores.content(again).get("m").keySet(), context);
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertEquals(e.getValue(), r.get(e.getKey()), context + ": " + e.getKey());
            }
            LogStores.verify(again);
        } catch (RuntimeException e) {
            throw new AssertionError(context + ": " + e, e);
        }
        return true;
    }
}
