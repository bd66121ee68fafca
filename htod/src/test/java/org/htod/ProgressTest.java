package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * The progress of a verification and of a recovering open: called more than once, with {@code
 * done} increasing, and a last call whose {@code done} is its {@code total} (a finished bar).
 */
class ProgressTest {
    private static final int ENTRIES = 20_000;

    /** Every call, in order. */
    private static final class Recorder implements Progress {
        final List<long[]> calls = new ArrayList<>();

        @Override
        public void step(long done, long total) {
            calls.add(new long[] {done, total});
        }

        void check(String what, int atLeast) {
            assertTrue(calls.size() >= atLeast, what + ": at least " + atLeast + " reports, found " + calls.size());
            for (int i = 1; i < calls.size(); i++) {
                long before = calls.get(i - 1)[0];
                long now = calls.get(i)[0];
                // The last report may repeat the one before it when the work ends on a report's boundary.
                assertTrue(now > before || (i == calls.size() - 1 && now == before),
                        what + ": done goes " + before + " then " + now + " at report " + i);
            }
            long[] last = calls.get(calls.size() - 1);
            assertEquals(last[1], last[0], what + ": the last report is of all the work");
            for (long[] c : calls) {
                assertTrue(c[1] == -1 || c[0] <= c[1], what + ": done " + c[0] + " past total " + c[1]);
            }
        }
    }

    private static void fill(HtodStore s) {
        HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
        for (int i = 0; i < ENTRIES; i++) {
            m.put(i, "value " + i);
        }
        HtodMap<Integer, String> other = s.map("other", Codec.ints(), Codec.string());
        for (int i = 0; i < 500; i++) {
            other.put(i, "o" + i);
        }
    }

    /** Leaves the store as a process that dies would: the device closed under it, then its close fails. */
    private static void abandon(HtodStore store, MemoryDevice dev) {
        dev.close();
        try {
            store.close();
        } catch (HtodException expected) {
            // the device is gone
        }
    }

    @Test
    void verifyReportsIncreasingBlocksInBothModes() {
        for (boolean direct : new boolean[] {false, true}) {
            String what = direct ? "direct mode" : "log mode";
            try (HtodStore s = TestStores.small(new MemoryDevice()).directMode(direct).open()) {
                fill(s);
                s.checkpoint(); // log mode: the changes into the tables, where the verifier counts their blocks
                Recorder r = new Recorder();
                VerifyReport v = s.verify(r);
                assertTrue(v.ok(), what + ": " + v);
                // Each of about 20,500 entry blocks is met by the heap's check, a walk and the
                // sweep: some 60,000 blocks, a report every 4096.
                r.check(what, 10);
                assertTrue(r.calls.get(r.calls.size() - 1)[0] >= 3L * ENTRIES, what + ": every block counted");
            }
        }
    }

    @Test
    void directModeRecoveryReportsTheHeapScanAndTheTableWalks() {
        MemoryDevice dev = new MemoryDevice();
        HtodStore s = TestStores.small(dev).directMode(true).open();
        fill(s);
        s.sync();
        abandon(s, dev);
        Recorder r = new Recorder();
        try (HtodStore again = TestStores.small(dev.reopen()).directMode(true).progress(r).open()) {
            assertFalse(again.recoveryReport().clean(), "the open recovered: " + again.recoveryReport());
            assertEquals(ENTRIES, again.map("m", Codec.ints(), Codec.string()).size());
            r.check("direct-mode recovery", 10);
            assertTrue(r.calls.get(r.calls.size() - 1)[0] >= 3L * ENTRIES,
                    "the scan's headers and the walks' and sweep's blocks all counted: " + r.calls.size() + " reports");
        }
    }

    @Test
    void logModeRecoveryReportsTheLogReplayed() {
        MemoryDevice dev = new MemoryDevice();
        HtodStore s = TestStores.small(dev).open();
        HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
        for (int i = 0; i < 3000; i++) {
            m.put(i, "value " + i);
        }
        s.sync();
        abandon(s, dev);
        Recorder r = new Recorder();
        try (HtodStore again = TestStores.small(dev.reopen()).progress(r).open()) {
            RecoveryReport rep = again.recoveryReport();
            assertFalse(rep.clean(), "the open replayed the log: " + rep);
            assertEquals(3000, again.map("m", Codec.ints(), Codec.string()).size());
            r.check("log replay", 3);
            assertTrue(r.calls.get(r.calls.size() - 1)[0] > 3000 * 16, "the last report is of the log's bytes replayed");
        }
    }

    @Test
    void aCleanOpenReportsNothing() {
        MemoryDevice dev = new MemoryDevice();
        try (HtodStore s = TestStores.small(dev).open()) {
            fill(s);
        }
        Recorder r = new Recorder();
        try (HtodStore again = TestStores.small(dev.reopen()).progress(r).open()) {
            assertTrue(again.recoveryReport().clean());
        }
        assertEquals(0, r.calls.size(), "a clean open has nothing long to report");
    }
}
