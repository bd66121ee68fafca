package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.core.Seeds;
import org.junit.jupiter.api.Test;

/**
 * The buffer's lookups against a model of what it holds, through every way a key enters and
 * leaves it: a new change, an absorbed one, an install that removes the key, and an install a
 * newer change overtook (the key stays). A get that answers null from the buffer's count of keys
 * must agree with the map at every step.
 */
class MobTest {

    private static byte[] key(int i) {
        return ("k" + i).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The flusher's pass over a batch: each key once, under its own stripe's lock, and a stripe a
     * writer holds (as through a group commit) does not hold up the keys of the other stripes.
     */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aPassOverABatchVisitsEachKeyOnceUnderItsLockAndBusyStripesLast() throws Exception {
        Mob mob = new Mob(1L << 30);
        java.util.List<Mob.Pending> keys = new java.util.ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            keys.add(new Mob.Pending(i % 3, key(i), i * 0x9E3779B97F4A7C15L, i));
        }
        Mob.Pending first = keys.get(0);
        ReentrantLock held = mob.lock(first.tableId, first.hash);
        java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Thread writer = new Thread(() -> {
            held.lock();
            try {
                locked.countDown();
                release.await(10, java.util.concurrent.TimeUnit.SECONDS); // a pass that waits for it first fails, not hangs
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                held.unlock();
            }
        });
        writer.setDaemon(true);
        writer.start();
        locked.await();
        int busy = sameStripe(mob, keys, held);
        assertEquals(true, busy > 0, "the held stripe has keys in the batch");
        int[] visits = new int[keys.size()];
        java.util.List<Integer> order = new java.util.ArrayList<>();
        mob.eachUnderLock(keys, i -> {
            Mob.Pending p = keys.get(i);
            if (!mob.lock(p.tableId, p.hash).isHeldByCurrentThread()) {
                throw new AssertionError("key " + i + " visited without its stripe's lock");
            }
            if (mob.lock(p.tableId, p.hash) == held && release.getCount() > 0) {
                int others = 0;
                for (int v : visits) {
                    others += v;
                }
                throw new AssertionError("a key of the busy stripe was visited while it was held, after " + others);
            }
            visits[i]++;
            order.add(i);
            if (order.size() == keys.size() - busy) {
                release.countDown(); // every key of the free stripes is done: the writer lets go
            }
        });
        writer.join();
        for (int i = 0; i < visits.length; i++) {
            assertEquals(1, visits[i], "visits of key " + i);
        }
        for (int j = order.size() - busy; j < order.size(); j++) {
            Mob.Pending p = keys.get(order.get(j));
            assertSame(held, mob.lock(p.tableId, p.hash), "the busy stripe's keys come last");
        }
    }

    private static int sameStripe(Mob mob, java.util.List<Mob.Pending> keys, ReentrantLock l) {
        int n = 0;
        for (Mob.Pending p : keys) {
            n += mob.lock(p.tableId, p.hash) == l ? 1 : 0;
        }
        return n;
    }

    /**
     * A map's listing of its buffered keys (what its iterators start from) names each key once,
     * while the flusher installs keys and writers put them back. A {@code ConcurrentHashMap}'s own
     * walk does not: a key removed and put back while the walk is inside its bin is met again at
     * the bin's end, and an iteration then returned the key twice.
     */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    void aListingNamesEachKeyOnceWhileKeysLeaveAndComeBack() throws Exception {
        Mob mob = new Mob(1L << 30);
        int keys = 2_000;
        for (int i = 0; i < keys; i++) {
            mob.put(1, key(i), i, new Mob.Value(new byte[] {1}, 0, 1), i + 1, 0, 1);
        }
        java.util.concurrent.atomic.AtomicBoolean listing = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicLong churned = new java.util.concurrent.atomic.AtomicLong();
        Thread flusher = new Thread(() -> {
            SplittableRandom r = new SplittableRandom(7);
            long lsn = keys;
            while (listing.get()) {
                int k = r.nextInt(keys);
                ReentrantLock lock = mob.lock(1, k);
                lock.lock();
                try {
                    Mob.Pending p = mob.get(1, key(k));
                    mob.installed(p, mob.take(p)); // the key leaves the buffer...
                    mob.put(1, key(k), k, new Mob.Value(new byte[] {2}, 0, 2), ++lsn, 0, 1); // ...and comes back
                } finally {
                    lock.unlock();
                }
                churned.incrementAndGet();
            }
        });
        flusher.start();
        try {
            for (int pass = 0; pass < 3_000; pass++) {
                java.util.Set<String> seen = new java.util.HashSet<>();
                for (Mob.Pending p : mob.of(1)) {
                    String k = new String(p.key, StandardCharsets.UTF_8);
                    if (!seen.add(k)) {
                        throw new AssertionError("pass " + pass + " (after " + churned.get() + " keys left and came"
                                + " back) listed " + k + " twice");
                    }
                }
            }
        } finally {
            listing.set(false);
            flusher.join();
        }
        assertEquals(keys, mob.keys());
        assertEquals(true, churned.get() > 0, "keys left and came back while the listings ran");
    }

    @Test
    void getsAgreeWithAModelThroughPutsAbsorptionsAndInstalls() {
        Seeds.run("MobTest", MobTest::run);
    }

    private static void run(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Mob mob = new Mob(1L << 30);
        Map<Integer, Mob.Value> model = new HashMap<>(); // what the buffer should hold per key
        Map<Integer, Mob.Value> taken = new HashMap<>(); // what the flusher took and has not installed
        long lsn = 0;
        for (int op = 0; op < 20_000; op++) {
            int k = r.nextInt(8); // few keys: the buffer empties and fills again often
            long table = k % 2;
            byte[] key = key(k);
            ReentrantLock lock = mob.lock(table, k);
            lock.lock();
            try {
                Mob.Pending p = mob.get(table, key);
                int what = r.nextInt(10);
                if (what < 5) {
                    Mob.Value v = new Mob.Value(new byte[] {(byte) op}, 0, op);
                    mob.put(table, key, k, v, ++lsn, 0, 1);
                    model.put(k, v);
                } else if (p != null && what < 8 && !taken.containsKey(k)) {
                    taken.put(k, mob.take(p));
                } else if (p != null && taken.containsKey(k)) {
                    Mob.Value took = taken.remove(k);
                    mob.installed(p, took);
                    if (model.get(k) == took) {
                        model.remove(k); // nothing came after the take: the key leaves
                    }
                }
            } finally {
                lock.unlock();
            }
            for (int i = 0; i < 8; i++) {
                Mob.Pending q = mob.get(i % 2, key(i));
                Mob.Value want = model.get(i);
                if (want == null) {
                    assertNull(q, "key " + i + " after op " + op);
                } else {
                    assertNotNull(q, "key " + i + " after op " + op);
                    assertSame(want, q.current, "key " + i + " after op " + op);
                }
            }
            assertEquals(model.size(), mob.keys(), "keys after op " + op);
        }
    }
}
