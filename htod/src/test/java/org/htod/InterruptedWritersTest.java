package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.core.HtodException;
import org.htod.core.device.Interrupter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Writers at SYNC on a store in a file, interrupted again and again while they write (a
 * cancelled request, an executor shut down): the store stays open for them all, every put returns
 * durable with its thread's interrupt kept, and every put is there after the store is closed and
 * opened again. Before, an interrupt that fell in a transfer closed the file's channel, and every
 * later operation of every thread failed until the store was opened again; and a put interrupted
 * in its wait for its group commit (log mode) or its sync (direct mode) threw, although its change
 * took effect.
 */
class InterruptedWritersTest {
    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void interruptedWritersLeaveTheStoreOpenAndLoseNothingAcknowledged(boolean direct) throws Exception {
        Path file = TestStores.tempFile("interrupted-writers");
        long seed = System.nanoTime();
        int puts = 300 * TestStores.scale();
        Map<String, String> acked = new ConcurrentHashMap<>();
        AtomicLong refused = new AtomicLong();
        AtomicLong kept = new AtomicLong();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        try {
            try (HtodStore s = Htod.builder(file).directMode(direct).durability(Durability.SYNC).open()) {
                HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
                List<Thread> writers = new ArrayList<>();
                for (int w = 0; w < 3; w++) {
                    int id = w;
                    writers.add(new Thread(() -> {
                        for (int i = 0; i < puts && failed.get() == null; i++) {
                            String k = "w" + id + "-" + i;
                            String v = "v" + i + "-" + "x".repeat(i % 300);
                            try {
                                m.put(k, v);
                                acked.put(k, v);
                            } catch (HtodException e) {
                                refused.incrementAndGet();
                                failed.compareAndSet(null, e);
                            } catch (Throwable t) {
                                failed.compareAndSet(null, t);
                            }
                            if (Thread.interrupted()) { // kept for the thread; cleared for the next put
                                kept.incrementAndGet();
                            }
                        }
                    }, "writer-" + w));
                }
                long sent = Interrupter.runInterrupting(writers, seed, 50, 200);
                System.out.println("InterruptedWritersTest (direct " + direct + ", seed " + seed + "): " + sent
                        + " interrupts sent, " + acked.size() + " puts acknowledged, " + kept.get()
                        + " of them with an interrupt kept, " + refused.get() + " refused");
                if (failed.get() != null) {
                    throw new AssertionError("seed " + seed + ": a put failed", failed.get());
                }
                assertEquals(3L * puts, acked.size(), "every put returned");
                assertTrue(kept.get() > 0, "the writers were interrupted, and kept the interrupts");
                m.put("after", "the interrupts");
                s.sync();
            }
            try (HtodStore s = Htod.builder(file).directMode(direct).open()) {
                HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
                for (Map.Entry<String, String> e : acked.entrySet()) {
                    assertEquals(e.getValue(), m.get(e.getKey()), "seed " + seed + ": " + e.getKey() + ", acknowledged");
                }
                assertEquals("the interrupts", m.get("after"));
                assertTrue(s.verify().ok(), "the store verifies");
            }
        } finally {
            Thread.interrupted();
            TestStores.delete(file);
        }
    }
}
