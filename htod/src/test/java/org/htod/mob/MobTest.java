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

    @Test
    void getsAgreeWithAModelThroughPutsAbsorptionsAndInstalls() {
        long seed = System.nanoTime();
        try {
            run(seed);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("MobTest seed " + seed + ": " + e.getMessage(), e);
        }
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
                    mob.put(table, key, k, v, ++lsn, 1);
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
