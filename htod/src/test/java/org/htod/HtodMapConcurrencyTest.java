package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Eight writer threads and two reader threads on one map, all at once, through several doublings:
 *
 * <ul>
 *   <li>each writer owns counters it increments with {@code compute} and {@code merge}: their final
 *       values are known exactly;
 *   <li>all writers increment shared counters with {@code putIfAbsent} and a {@code replace(k, old,
 *       new)} loop: each key ends at the number of successful replaces on it, summed over threads;
 *   <li>each writer inserts and removes its own scratch keys (removing every other one, with {@code
 *       remove(k, v)}), which makes the table double while everything else runs;
 *   <li>readers iterate (never twice the same key in one pass, never an exception) and check that a
 *       shared counter never goes down.
 * </ul>
 *
 * Then the values, the size and the structure are checked, and again after a close and reopen.
 */
@ExtendWith(VerifyStores.class)
class HtodMapConcurrencyTest {
    private static final int WRITERS = 8;
    private static final int OWN = 40;
    private static final int SHARED = 16;
    private static final int SCRATCH = 1500;

    @ParameterizedTest
    @EnumSource(value = Durability.class, names = {"NONE", "SYNC"})
    void concurrentWritersAndReadersKeepEveryOutcome(Durability durability, OpenedStores stores) throws Exception {
        long seed = 0xC0FFEE + durability.ordinal();
        MemoryDevice dev = new MemoryDevice();
        HtodStore store = stores.open(dev, b -> TestStores.small(b).durability(durability));
        HtodMap<String, Long> m = store.map("mt", Codec.string(), Codec.longs());
        int rounds = 300 * TestStores.scale();
        long[][] sharedWins = new long[WRITERS][SHARED];
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean writing = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int id = w;
            threads.add(new Thread(() -> {
                try {
                    start.await();
                    SplittableRandom r = new SplittableRandom(seed * 31 + id);
                    int scratch = 0;
                    for (int round = 0; round < rounds; round++) {
                        for (int i = 0; i < OWN; i++) {
                            String k = "own-" + id + "-" + i;
                            if (r.nextBoolean()) {
                                m.compute(k, (key, v) -> v == null ? 1L : v + 1);
                            } else {
                                m.merge(k, 1L, Long::sum);
                            }
                        }
                        int s = r.nextInt(SHARED);
                        String sk = "shared-" + s;
                        m.putIfAbsent(sk, 0L);
                        while (true) {
                            Long old = m.get(sk);
                            if (m.replace(sk, old, old + 1)) {
                                sharedWins[id][s]++;
                                break;
                            }
                        }
                        for (int i = 0; i < SCRATCH / rounds + 1 && scratch < SCRATCH; i++, scratch++) {
                            String x = "scratch-" + id + "-" + scratch;
                            assertNull(m.put(x, (long) scratch));
                            if (scratch % 2 == 1) {
                                String prev = "scratch-" + id + "-" + (scratch - 1);
                                assertTrue(m.remove(prev, (long) scratch - 1), prev);
                            }
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "writer-" + w));
        }
        for (int rd = 0; rd < 2; rd++) {
            threads.add(new Thread(() -> {
                try {
                    start.await();
                    long[] last = new long[SHARED];
                    while (writing.get()) {
                        Set<String> seen = new HashSet<>();
                        for (Map.Entry<String, Long> e : m.entrySet()) {
                            if (!seen.add(e.getKey())) {
                                throw new AssertionError("one pass returned " + e.getKey() + " twice");
                            }
                        }
                        for (int s = 0; s < SHARED; s++) {
                            Long v = m.get("shared-" + s);
                            long now = v == null ? 0 : v;
                            if (now < last[s]) {
                                throw new AssertionError("shared-" + s + " went down from " + last[s] + " to " + now);
                            }
                            last[s] = now;
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "reader-" + rd));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (int w = 0; w < WRITERS; w++) {
            threads.get(w).join();
        }
        writing.set(false);
        for (Thread t : threads) {
            t.join();
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("seed=" + seed + ": " + errors.size() + " threads failed");
            errors.forEach(e::addSuppressed);
            throw e;
        }
        check(m, rounds, sharedWins);
        TestStores.verify(store);
        store.close();
        try (HtodStore again = stores.open(dev.reopen(), TestStores::small)) {
            assertTrue(again.recoveryReport().clean());
            check(again.map("mt", Codec.string(), Codec.longs()), rounds, sharedWins);
            TestStores.verify(again);
        }
    }

    private static void check(HtodMap<String, Long> m, int rounds, long[][] sharedWins) {
        long expectedSize = 0;
        for (int w = 0; w < WRITERS; w++) {
            for (int i = 0; i < OWN; i++) {
                assertEquals(rounds, m.get("own-" + w + "-" + i), "own-" + w + "-" + i);
                expectedSize++;
            }
            for (int x = 0; x < SCRATCH; x++) {
                Long v = m.get("scratch-" + w + "-" + x);
                if (x % 2 == 0 && x < SCRATCH - 1) {
                    assertNull(v, "scratch-" + w + "-" + x);
                } else {
                    assertEquals(x, v);
                    expectedSize++;
                }
            }
        }
        for (int s = 0; s < SHARED; s++) {
            long sum = 0;
            for (int w = 0; w < WRITERS; w++) {
                sum += sharedWins[w][s];
            }
            Long v = m.get("shared-" + s);
            assertEquals(sum, v == null ? 0 : v, "shared-" + s);
            if (v != null) {
                expectedSize++;
            }
        }
        assertEquals(expectedSize, m.size());
    }
}
