package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.HeldDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * In log mode a doubling is the flusher's work: writers never wait for it. The test holds the
 * flusher in the middle of a doubling (its first device read from a doubling step, once armed,
 * waits until the test lets it go) and meanwhile has SYNC writers insert new keys, replace and
 * remove installed ones and read them back, every entry read from the device (caches off), so
 * that each put reads the table being doubled to decide. Every one of those writes must be
 * acknowledged while the doubling is still held; then the doubling ends, and a reopen finds them
 * all.
 *
 * <p>It fails if a writer's path comes to wait for a doubling step: the install lock, the table
 * writer locks a step holds, or a device read made under a view lock.
 */
class DoublingDoesNotStallWritersTest {

    /** Whether the calling thread is in a doubling step. */
    private static boolean inDoublingStep() {
        return StackWalker.getInstance()
                .walk(st -> st.anyMatch(f -> f.getClassName().equals("org.htod.table.Doubler$Logged")));
    }

    @Test
    void syncWritersFinishWhileADoublingIsHeld() throws InterruptedException {
        MemoryDevice disk = new MemoryDevice();
        HeldDevice dev = new HeldDevice(disk, false, DoublingDoesNotStallWritersTest::inDoublingStep);
        HtodStore s = Htod.builder(dev).grain(64).logSize(16 << 20).cacheSize(0).durability(Durability.SYNC).open();
        int threads = 4;
        int perThread = 150 * LogStores.scale();
        int installed = 300; // installed with the doublings they need (512 buckets); 300 more make the next due
        int share = installed / threads; // each writer replaces and removes its own old keys, in order
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < installed; i++) {
                m.put("old-" + i, "v0");
            }
            s.checkpoint(); // installed: later puts of these keys read the table to decide

            dev.armed = true;
            for (int i = 0; i < installed; i++) {
                m.put("new-" + i, "v0"); // the buffer now holds more keys than the table may take
            }
            assertTrue(dev.held.await(2, TimeUnit.MINUTES), "the flusher began no doubling");

            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<Thread> writers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread w = new Thread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        String old = "old-" + (me * share + i % share);
                        if (i % 3 == 2) {
                            m.remove(old);
                            if (m.get(old) != null) {
                                throw new AssertionError(old + " still there after its removal");
                            }
                        } else {
                            m.put(old, "v" + me + "-" + i);
                            if (!("v" + me + "-" + i).equals(m.get(old))) {
                                throw new AssertionError(old + " does not read back");
                            }
                        }
                        m.put("t" + me + "-" + i, "w" + i);
                    }
                }, "writer-" + t);
                w.setUncaughtExceptionHandler((x, e) -> failures.add(e));
                writers.add(w);
                w.start();
            }
            for (Thread w : writers) {
                w.join(TimeUnit.MINUTES.toMillis(2));
                assertFalse(w.isAlive(), w.getName() + " waits for the held doubling");
            }
            assertTrue(failures.isEmpty(), "writers failed: " + failures);
            assertEquals(1, dev.release.getCount(), "the doubling was let go before the writers finished");
        } finally {
            dev.release.countDown();
        }
        s.close();

        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
            for (int t = 0; t < threads; t++) {
                for (int i = 0; i < perThread; i++) {
                    assertEquals("w" + i, m.get("t" + t + "-" + i));
                }
            }
            for (int i = 0; i < installed; i++) {
                assertEquals("v0", m.get("new-" + i));
            }
            // Each old key as its own writer left it: its last turn, the highest i with i % share == k % share.
            for (int k = 0; k < installed; k++) {
                int me = k / share;
                int i = k % share;
                while (i + share < perThread) {
                    i += share;
                }
                String expected = i >= perThread ? "v0" : i % 3 == 2 ? null : "v" + me + "-" + i;
                assertEquals(expected, m.get("old-" + k), "old-" + k);
            }
            LogStores.verify(again);
        }
    }
}
