package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Blocks freed and handed out again: entries unlinked by removals (one by one, by {@code
 * clear}, by an expiry sweep) and entries of the same size put next, which reuse the freed
 * blocks, with a write of the installs failing, each in turn, and a power cut after them. The replay redoes a record's allocations before its
 * frees: a record listing the free of a block and the allocation that reused it would be refused
 * ("an allocation over allocated space"). No record does: a commit frees what its record
 * unlinks only once that record is durable (and what a failed commit's durable record unlinked,
 * only after the next record), so a reuse always lands in a later record than the free.
 */
class ReusedBlocksReplayTest {
    private static final int KEYS = 24;

    enum Removal { REMOVE, CLEAR, SWEEP }

    @ParameterizedTest
    @EnumSource(Removal.class)
    void freedEntriesReusedByTheNextInstallReplay(Removal how) {
        Map<String, Integer> tally = new TreeMap<>();
        for (Durability d : new Durability[] {Durability.SYNC, Durability.ASYNC}) {
            for (int n = 1; ; n++) {
                if (!point(how, d, n, tally)) {
                    break; // the installs make fewer than n writes
                }
            }
        }
        System.out.println("ReusedBlocksReplayTest " + how + ": " + tally);
        assertTrue(tally.getOrDefault("failed install", 0) >= 4, "installs that met the fault: " + tally);
    }

    /** A clock that reads {@code now}, in milliseconds. */
    private static java.time.Clock clockOf(AtomicLong now) {
        return new java.time.Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return java.time.ZoneOffset.UTC;
            }

            @Override
            public java.time.Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public java.time.Instant instant() {
                return java.time.Instant.ofEpochMilli(now.get());
            }
        };
    }

    /** Returns whether the installs met the fault armed at their {@code n}-th write. */
    private static boolean point(Removal how, Durability d, int n, Map<String, Integer> tally) {
        String context = how + " at " + d + ", write " + n + " of the installs failed";
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        AtomicLong now = new AtomicLong(1_000_000);
        HtodStore s = Htod.builder(faults).grain(64).logSize(1 << 20).durability(d)
                .clock(clockOf(now)).open();
        Map<String, String> expected = new TreeMap<>();
        boolean met;
        MemoryDevice crashed;
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < KEYS; i++) {
                m.put("a" + (100 + i), "v" + (100 + i));
                expected.put("a" + (100 + i), "v" + (100 + i));
            }
            s.checkpoint();
            WriteLayer layer = LogStores.layer(s);
            ReentrantLock install = layer.installLock();
            install.lock(); // the flusher waits: the installs below are this test's
            try {
                switch (how) {
                    case REMOVE -> {
                        for (int i = 0; i < KEYS; i++) {
                            m.remove("a" + (100 + i));
                        }
                    }
                    case CLEAR -> m.clear();
                    case SWEEP -> {
                        // every key again with a time to live that has run out: the sweep removes them
                        for (int i = 0; i < KEYS; i++) {
                            m.put("a" + (100 + i), "v" + (100 + i), java.time.Duration.ofMillis(1));
                        }
                        while (layer.installs.installOnce()) {
                            // installed expired: the sweep below unlinks them
                        }
                        now.addAndGet(60_000);
                        assertEquals(KEYS, m.sweepExpired(), context);
                    }
                }
                expected.clear();
                int raised = faults.faultsRaised();
                faults.failWrite(n, FaultyDevice.Fault.IO_ERROR, false);
                try {
                    // the removals' install, then new entries of the same size, which reuse the freed blocks
                    while (layer.installs.installOnce()) {
                        // until the buffer is empty or the fault is met
                    }
                    for (int i = 0; i < KEYS; i++) {
                        m.put("b" + (100 + i), "w" + (100 + i));
                    }
                    while (layer.installs.installOnce()) {
                        // the new entries
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
                for (int i = 0; i < KEYS; i++) {
                    String k = "b" + (100 + i);
                    m.put(k, "w" + (100 + i)); // a put the fault refused, again
                    expected.put(k, "w" + (100 + i));
                }
                for (int i = 0; i < KEYS; i += 2) {
                    m.remove("b" + (100 + i)); // freed after their record, then reused by the next puts
                    expected.remove("b" + (100 + i));
                }
                while (layer.installs.installOnce()) {
                    // what the fault left, and the removals
                }
                m.put("z", "z"); // its record syncs the heap: the blocks freed above may be taken by a batch
                expected.put("z", "z");
                while (layer.installs.installOnce()) {
                    // one key
                }
                for (int i = 0; i < KEYS; i += 2) {
                    m.put("c" + (100 + i), "x" + (100 + i));
                    expected.put("c" + (100 + i), "x" + (100 + i));
                }
                while (layer.installs.installOnce()) {
                    // new entries in the blocks the removals freed
                }
            } finally {
                install.unlock();
            }
            s.sync();
            crashed = LogStores.copy(disk); // a power cut now: every write landed, no checkpoint since the first
        } finally {
            LogStores.closeQuietly(s);
        }
        try (HtodStore again = Htod.builder(crashed).durability(d).open()) {
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
