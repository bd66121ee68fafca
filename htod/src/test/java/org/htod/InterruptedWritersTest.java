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
 * cancelled request, an executor shut down): the store stays open for them all. A put whose wait
 * for its group commit or its sync is interrupted throws {@link HtodException} saying so (it may
 * still take effect, as any write told it failed); every other put returns, and every put that
 * returned is there after the store is closed and opened again. Before, an interrupt that fell in
 * a transfer closed the file's channel, and every later operation of every thread failed until
 * the store was opened again.
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
                                if (!String.valueOf(e.getMessage()).startsWith("interrupted while waiting")) {
                                    failed.compareAndSet(null, e);
                                }
                                refused.incrementAndGet();
                            } catch (Throwable t) {
                                failed.compareAndSet(null, t);
                            }
                            Thread.interrupted(); // each put begins without one: the interrupter sends more
                        }
                    }, "writer-" + w));
                }
                long sent = Interrupter.runInterrupting(writers, seed, 50, 200);
                System.out.println("InterruptedWritersTest (direct " + direct + ", seed " + seed + "): " + sent
                        + " interrupts sent, " + acked.size() + " puts acknowledged, " + refused.get()
                        + " refused as interrupted");
                if (failed.get() != null) {
                    throw new AssertionError("seed " + seed + ": a writer failed otherwise than by its interrupt",
                            failed.get());
                }
                assertEquals(3L * puts, acked.size() + refused.get(), "each put returned or was refused");
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
