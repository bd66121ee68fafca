package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.core.Seeds;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * {@code HtodStore.checkpoint()} called over and over beside writers that keep the smallest log
 * full and keep the tables doubling. A checkpoint installs what is buffered and steps the
 * doublings that are due, in the caller's thread, under the install lock; a step whose log record
 * had to wait for room waited there for ever, since only installs and a checkpoint, under that
 * same lock, make room (once in a run of {@code LogModeCrashTest}). Every writer and every
 * checkpoint must finish, and the maps must hold what was written.
 */
class CheckpointBesideWritersTest {
    private static final int WRITERS = 3;
    private static final int MAPS = 8;
    private static final long RUN_MILLIS = 5_000;

    @Test
    void checkpointsBesideWritersFillingTheLogAllFinish() throws Exception {
        Seeds.run("CheckpointBesideWritersTest", CheckpointBesideWritersTest::run);
    }

    private static void run(long seed) throws Exception {
        Htod.Builder b = Htod.builder(new MemoryDevice(256L << 20, 512)).grain(64).logSize(LoggedOpen.MIN_LOG)
                .bufferSize(64 << 10).durability(Durability.NONE).loadFactor(0.25).cacheSize(64 << 10);
        b = LayerAccess.doublingMinBatch(LayerAccess.installBatch(b, 48), 8);
        Map<String, Map<String, String>> model = new ConcurrentHashMap<>();
        HtodStore store = b.open();
        boolean hung = false;
        try {
            List<HtodMap<String, String>> maps = new ArrayList<>();
            for (int m = 0; m < MAPS; m++) {
                maps.add(store.map("m" + m, Codec.string(), Codec.string()));
                model.put("m" + m, new ConcurrentHashMap<>());
            }
            AtomicBoolean stop = new AtomicBoolean();
            Map<String, Throwable> failures = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int id = w;
                threads.add(new Thread(() -> {
                    SplittableRandom r = new SplittableRandom(seed + id);
                    try {
                        for (long i = 0; !stop.get(); i++) {
                            int m = r.nextInt(MAPS);
                            String k = "w" + id + "-" + i; // new keys: the tables keep doubling
                            String v = "v" + r.nextInt(1000) + "-".repeat(r.nextInt(200));
                            maps.get(m).set(k, v);
                            model.get("m" + m).put(k, v);
                        }
                    } catch (Throwable e) {
                        failures.put("writer " + id, e);
                    }
                }, "writer-" + w));
            }
            threads.add(new Thread(() -> {
                try {
                    while (!stop.get()) {
                        store.checkpoint();
                    }
                } catch (Throwable e) {
                    failures.put("checkpoint", e);
                }
            }, "checkpointer"));
            threads.forEach(Thread::start);
            TimeUnit.MILLISECONDS.sleep(RUN_MILLIS);
            stop.set(true);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (Thread t : threads) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (t.isAlive()) {
                    hung = true; // the store is left open: its close would wait for the hung thread too
                    AssertionError e = new AssertionError(t.getName() + " hangs");
                    e.setStackTrace(t.getStackTrace());
                    throw e;
                }
            }
            for (Map.Entry<String, Throwable> f : failures.entrySet()) {
                throw new AssertionError(f.getKey() + " failed: " + f.getValue(), f.getValue());
            }
            for (int m = 0; m < MAPS; m++) {
                Map<String, String> want = model.get("m" + m);
                assertEquals(want.size(), maps.get(m).size(), "map m" + m + " size");
                for (Map.Entry<String, String> e : want.entrySet()) {
                    assertEquals(e.getValue(), maps.get(m).get(e.getKey()), "map m" + m + " key " + e.getKey());
                }
            }
        } finally {
            if (!hung) {
                store.close();
            }
        }
    }
}
