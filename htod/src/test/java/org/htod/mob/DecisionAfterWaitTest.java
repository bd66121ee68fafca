package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.MemoryDevice;
import org.htod.core.log.Log;
import org.junit.jupiter.api.Test;

/**
 * A writer whose record does not fit in a full log waits for room and then logs the change it
 * decided before the wait, if the key has not changed meanwhile. A value that expired during
 * the wait is such a change: a {@code replace} decided on the live value must not bring the
 * expired key back. It used to, since the key's state compared equal (same value, same expiry)
 * whatever the clock said.
 */
class DecisionAfterWaitTest {
    /** A clock the test moves by hand. */
    private static final class TestClock extends Clock {
        volatile long now = 1_000_000;

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(now);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    private static boolean waitingForRoom(Thread t) {
        return LogStores.inside(t, Log.class, "awaitRoom");
    }

    /** Waits until {@code writer}, its change decided, waits for room in the log. */
    private static void awaitWaitingForRoom(Thread writer) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!waitingForRoom(writer) && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertTrue(waitingForRoom(writer), "the writer waits for room in the log, its replace decided: "
                + writer.getState() + " " + java.util.Arrays.toString(writer.getStackTrace()));
    }

    @Test
    void aReplaceDecidedBeforeAWaitForLogRoomDoesNotReviveAValueThatExpiredMeanwhile() throws Exception {
        TestClock clock = new TestClock();
        HtodStore s = Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20).durability(Durability.SYNC)
                .clock(clock).open();
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put("k", "old", Duration.ofSeconds(10));
            s.checkpoint(); // installed: the key's state is the table's, before and after the wait alike
            WriteLayer layer = LogStores.layer(s);
            long tableId = layer.map("m", false).tableId;
            ReentrantLock install = layer.installLock();
            Thread writer;
            AtomicReference<Object> replaced = new AtomicReference<>();
            install.lock(); // no install and no checkpoint: nothing gives the log's room back
            try {
                // The log filled, as far as writers may fill it, with changes of another key.
                Log log = layer.log;
                long version = 1;
                for (int size : new int[] {2000, 0}) { // large records, then the smallest, until none fits
                    while (log.tryAppend(DataRecord.TYPE, DataRecord.encode(List.of(new DataRecord.Op(tableId,
                            "filler".getBytes(StandardCharsets.UTF_8), new byte[size], version++, 0, null)))) != null) {
                        // appended
                    }
                }
                writer = new Thread(() -> {
                    try {
                        replaced.set(String.valueOf(m.replace("k", "new")));
                    } catch (Throwable t) {
                        replaced.set(t);
                    }
                });
                writer.start();
                awaitWaitingForRoom(writer);
                clock.now += 20_000; // the value expires during the wait
            } finally {
                install.unlock();
            }
            writer.join(10_000);
            assertFalse(writer.isAlive());
            assertEquals("null", replaced.get(), "the replace finds the key absent once it looks again");
            assertEquals(null, m.get("k"), "the expired value is not brought back");
        } finally {
            LogStores.closeQuietly(s);
        }
    }

    /**
     * The key changes during the wait to a value of the same version and expiry whose bytes hash
     * as the old one's do: removed and put again ("BB", version 1 again, as "Aa" had), installed,
     * so that the writer sees it in the table. A {@code replace} decided on "Aa" must find "BB"
     * and change nothing; the table's state was compared by a hash of the value, and the replace
     * overwrote "BB".
     */
    @Test
    void aReplaceDecidedBeforeAWaitDoesNotOverwriteAnotherValueThatHashesAlike() throws Exception {
        HtodStore s = Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20).durability(Durability.SYNC).open();
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            assertEquals("Aa".hashCode(), "BB".hashCode());
            m.put("k", "Aa");
            s.checkpoint(); // installed: the writer reads the key's state from the table
            WriteLayer layer = LogStores.layer(s);
            long tableId = layer.map("m", false).tableId;
            ReentrantLock install = layer.installLock();
            Thread writer;
            AtomicReference<Object> replaced = new AtomicReference<>();
            String big = "x".repeat(2_000);
            install.lock(); // no install and no checkpoint: nothing gives the log's room back
            try {
                // The log filled with another key's changes until a record of the big value does
                // not fit, and small records still do.
                Log log = layer.log;
                long version = 1;
                while (log.tryAppend(DataRecord.TYPE, DataRecord.encode(List.of(new DataRecord.Op(tableId,
                        "filler".getBytes(StandardCharsets.UTF_8), new byte[2_100], version++, 0, null)))) != null) {
                    // appended
                }
                writer = new Thread(() -> {
                    try {
                        replaced.set(m.replace("k", "Aa", big));
                    } catch (Throwable t) {
                        replaced.set(t);
                    }
                });
                writer.start();
                awaitWaitingForRoom(writer);
                m.remove("k");
                m.put("k", "BB"); // version 1, as "Aa" had
                assertEquals(1, m.version("k"));
                while (layer.installs.installOnce()) {
                    // installed before any room comes back (the flusher's records take the reserve)
                }
            } finally {
                install.unlock();
            }
            s.checkpoint(); // "BB" installed, and the log's room given back: the writer goes on
            writer.join(10_000);
            assertFalse(writer.isAlive());
            assertEquals(Boolean.FALSE, replaced.get(), "the replace finds \"BB\", not \"Aa\"");
            assertEquals("BB", m.get("k"));
        } finally {
            LogStores.closeQuietly(s);
        }
    }
}
