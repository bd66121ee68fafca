package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.core.device.MemoryDevice;
import org.htod.table.HashtableOnDisk;
import org.htod.testkit.ManualClock;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Direct mode: a read that meets an expired entry removes it, and a function given to compute or
 * merge may read the map. A removal made by such a read, under the function's own write, changed
 * the chain the write had already walked; and two such reads, each of a key whose stripe the
 * other's write held, waited for each other for good.
 */
@ExtendWith(VerifyStores.class)
class ExpiredReadInFunctionTest {
    /**
     * A key of the bucket {@code bucket} of map {@code map} of {@code s} while it has 64 buckets
     * (by the hash function of its table, whose key it drew), named {@code prefix} and a number.
     */
    private static String inBucket(HtodStore s, String map, String prefix, long bucket) {
        HashtableOnDisk t = s.tableStore().table(map, false);
        for (int i = 0;; i++) {
            String b = prefix + i;
            if ((t.hash(Codec.string().encode(b)) & 63) == bucket) {
                return b;
            }
        }
    }

    @Test
    void computeReadingAnExpiredKeyOfItsChain(OpenedStores stores) {
        ManualClock clock = new ManualClock();
        MemoryDevice dev = new MemoryDevice();
        HtodStore store = stores.open(dev, b -> TestStores.small(b).directMode(true).clock(clock));
        HtodMap<String, String> m = store.map("m", Codec.string(), Codec.string());
        String[] k = {inBucket(store, "m", "a", 5), inBucket(store, "m", "b", 5)}; // two keys of one bucket
        m.put(k[0], "a1");
        m.put(k[1], "b1", Duration.ofMillis(1)); // first in the chain, before a
        clock.millis.addAndGet(10);
        assertEquals("a1b", m.compute(k[0], (key, v) -> v + (m.get(k[1]) == null ? "b" : "?")));
        assertEquals("a1b", m.get(k[0]));
        assertNull(m.get(k[1]));
        assertEquals(1, m.size());
        store.close();
        try (HtodStore again = stores.open(dev.reopen(), b -> TestStores.small(b).directMode(true).clock(clock))) {
            HtodMap<String, String> m2 = again.map("m", Codec.string(), Codec.string());
            assertEquals("a1b", m2.get(k[0]));
            assertEquals(1, m2.size());
        }
    }

    @Test
    void computesReadingExpiredKeysOfEachOthersStripesDoNotWaitForEachOther() throws Exception {
        ManualClock clock = new ManualClock();
        // not tracked: a store whose writers hang cannot be closed
        HtodStore store = TestStores.small(new MemoryDevice()).directMode(true).clock(clock).open();
        HtodMap<String, String> m = store.map("m", Codec.string(), Codec.string());
        String a = inBucket(store, "m", "a", 1);
        String d = inBucket(store, "m", "d", 1);
        String c = inBucket(store, "m", "c", 2);
        String b = inBucket(store, "m", "b", 2);
        m.put(a, "a");
        m.put(c, "c");
        m.put(b, "b", Duration.ofMillis(1));
        m.put(d, "d", Duration.ofMillis(1));
        clock.millis.addAndGet(10);
        CountDownLatch in1 = new CountDownLatch(1);
        CountDownLatch in2 = new CountDownLatch(1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t1 = new Thread(() -> {
            try {
                m.compute(a, (k, v) -> {
                    in1.countDown();
                    await(in2);
                    return v + (m.get(b) == null ? "-" : "+");
                });
            } catch (Throwable e) {
                failed.set(e);
            }
        }, "compute " + a);
        Thread t2 = new Thread(() -> {
            try {
                m.compute(c, (k, v) -> {
                    in2.countDown();
                    await(in1);
                    return v + (m.get(d) == null ? "-" : "+");
                });
            } catch (Throwable e) {
                failed.set(e);
            }
        }, "compute " + c);
        t1.setDaemon(true);
        t2.setDaemon(true);
        t1.start();
        t2.start();
        t1.join(10_000);
        t2.join(10_000);
        assertTrue(!t1.isAlive() && !t2.isAlive(), "two computes, each reading an expired key of the other's stripe,"
                + " still running after 10 s");
        assertNull(failed.get());
        assertEquals("a-", m.get(a));
        assertEquals("c-", m.get(c));
        m.sweepExpired();
        assertEquals(2, m.size());
        TestStores.verify(store);
        store.close();
    }

    private static void await(CountDownLatch l) {
        try {
            assertTrue(l.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
