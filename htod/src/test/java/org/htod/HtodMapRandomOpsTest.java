package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Random operations on an HtodMap checked one by one against a HashMap, with the store closed
 * and reopened (cleanly, or abandoned as a process that dies and recovered) from time to time,
 * and verified each time. The runs cover every storage method at every durability (NONE and
 * ASYNC sync before they are abandoned, SYNC need not), each pair once with no entry cache and a
 * small key space (dense chains), once with a cache and a large key space (several doublings):
 * 8 MiB, which holds every bucket slot and entry, or 16 KiB, whose entry cache evicts all the time
 * and whose 4 KiB of bucket slots hold a small array's but not a doubled one's (reads then mix
 * slots in memory and on the device); value sizes vary, up to 2.5 KB. A run in direct mode per
 * storage method and cache adds values past an entry's first read (4 KiB). Gets, key and entry
 * iterations check every read path against the model. A failure names its seed, configuration
 * and operation.
 */
class HtodMapRandomOpsTest {
    /** One run's store and workload. */
    record Config(StorageMethod method, Durability durability, long cache, int keySpace, int bigEvery, boolean direct,
            boolean pastFirstRead) {
        Config(StorageMethod method, Durability durability, long cache, int keySpace, int bigEvery) {
            this(method, durability, cache, keySpace, bigEvery, false, false);
        }
    }

    private static final List<Config> CONFIGS = configs();

    private static List<Config> configs() {
        List<Config> out = new ArrayList<>();
        int i = 0;
        for (StorageMethod m : StorageMethod.values()) {
            for (Durability d : Durability.values()) {
                out.add(new Config(m, d, 0, i % 2 == 0 ? 16 : 300, i % 3 == 0 ? 0 : 50));
                out.add(new Config(m, d, i % 2 == 0 ? 8 << 20 : 16 << 10, i % 2 == 0 ? 20_000 : 3000, i % 3 == 1 ? 0 : 50));
                i++;
            }
        }
        return out;
    }

    /**
     * Direct and log mode, with some values past an entry's first read (4 KiB): a miss reads such
     * an entry whole, the cache keeps its first page, and a hit reads the rest of the value. Their
     * churn fragments the heap enough that direct mode coalesces (log mode never does: see
     * {@code Heap.coalesce}).
     */
    @Test
    void valuesPastTheFirstReadMatchAHashMap() {
        int opsPerRun = 20_000 * TestStores.scale();
        Map<String, Integer> done = new TreeMap<>();
        int i = 0;
        for (boolean direct : new boolean[] {true, false}) {
            for (StorageMethod m : StorageMethod.values()) {
                // 64 MiB keeps these entries whole (up to 16 KiB); 8 MiB their first page only
                for (long cache : new long[] {64 << 20, 8 << 20, 16 << 10}) {
                    Durability d = Durability.values()[i % Durability.values().length];
                    run(0x5eed1000L + i, new Config(m, d, cache, 3000, 20, direct, true), opsPerRun, done);
                    i++;
                }
            }
        }
        assertTrue(done.getOrDefault("iteration", 0) >= i / 2, "iteration too rarely: " + done);
    }

    @Test
    void randomOperationsMatchAHashMap() {
        int opsPerRun = 50_000 * TestStores.scale();
        Map<String, Integer> done = new TreeMap<>();
        for (int i = 0; i < CONFIGS.size(); i++) {
            long seed = 0x5eed0000L + i;
            run(seed, CONFIGS.get(i), opsPerRun, done);
        }
        System.out.println(CONFIGS.size() + " runs of " + opsPerRun + " operations, reached (runs): " + done);
        // What the runs did, so that a workload that stops reaching a case fails here.
        for (String what : new String[] {"clean reopen", "abandoned reopen", "iteration", "putAll", "clear",
            "doubled past 1024 buckets"}) {
            assertTrue(done.getOrDefault(what, 0) >= CONFIGS.size() / 3, what + " too rarely: " + done);
        }
    }

    static void run(long seed, Config c, int ops, Map<String, Integer> done) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice dev = new MemoryDevice();
        Map<String, String> model = new HashMap<>();
        HtodStore store = open(dev, c, seed);
        HtodMap<String, String> m = store.map("random", Codec.string(), Codec.string());
        int op = 0;
        Set<String> seen = new HashSet<>();
        try {
            for (op = 0; op < ops; op++) {
                if (r.nextInt(10_000) == 0 || op == ops - 1) {
                    boolean clean = r.nextBoolean();
                    if (clean) {
                        TestStores.verify(store);
                        store.close();
                    } else {
                        if (c.durability() != Durability.SYNC) {
                            store.sync(); // then the process dies: what it synced is on the device
                        }
                        abandon(store, dev);
                    }
                    seen.add(clean ? "clean reopen" : "abandoned reopen");
                    dev = dev.reopen();
                    store = open(dev, c, seed);
                    assertEquals(clean, store.recoveryReport().clean(), store.recoveryReport().toString());
                    m = store.map("random", Codec.string(), Codec.string());
                    assertEquals(model.size(), m.size(), "size after reopen");
                    TestStores.verify(store);
                    continue;
                }
                String kind = step(r, m, model, c.keySpace(), c.bigEvery(), c.pastFirstRead());
                if (kind != null) {
                    seen.add(kind);
                }
                if (m.size() > 768) {
                    seen.add("doubled past 1024 buckets");
                }
            }
            assertEquals(model, new HashMap<>(m));
            TestStores.verify(store);
            store.close();
        } catch (Throwable e) {
            throw new AssertionError("seed=0x" + Long.toHexString(seed) + " op=" + op + " " + c + ": " + e, e);
        }
        seen.forEach(k -> done.merge(k, 1, Integer::sum));
    }

    /**
     * Leaves the store as a process that dies would: its device closed first, so that nothing
     * more reaches the bytes (a background sync of ASYNC included); closing it then only stops
     * its threads, and fails.
     */
    private static void abandon(HtodStore store, MemoryDevice dev) {
        dev.close();
        try {
            store.close();
        } catch (HtodException expected) {
            // the device is gone
        }
    }

    private static HtodStore open(MemoryDevice dev, Config c, long seed) {
        return LayerAccess.hashKeySeed(TestStores.small(dev), seed).directMode(c.direct()).storageMethod(c.method()).cacheSize(c.cache())
                .durability(c.durability())
                .syncInterval(Duration.ofMillis(5)).open();
    }

    private static String value(SplittableRandom r, int bigEvery, boolean pastFirstRead) {
        // big values: within an entry's first read (4 KiB), or with pastFirstRead some past it (read
        // whole on a miss, their first page cached)
        int len = bigEvery > 0 && r.nextInt(bigEvery) == 0 ? (pastFirstRead && r.nextInt(3) == 0 ? 4100 + r.nextInt(6000)
                : 500 + r.nextInt(2000)) : r.nextInt(12);
        StringBuilder b = new StringBuilder(len + 4).append('v');
        for (int i = 0; i < len; i++) {
            b.append((char) ('a' + r.nextInt(26)));
        }
        return b.toString();
    }

    /** One random operation, checked against the model; returns its name when it is one the runs must reach. */
    static String step(SplittableRandom r, HtodMap<String, String> m, Map<String, String> model, int keySpace,
            int bigEvery) {
        return step(r, m, model, keySpace, bigEvery, false);
    }

    static String step(SplittableRandom r, HtodMap<String, String> m, Map<String, String> model, int keySpace,
            int bigEvery, boolean pastFirstRead) {
        String reached = null;
        String k = "k" + r.nextInt(keySpace);
        String v = value(r, bigEvery, pastFirstRead);
        int kind = r.nextInt(100);
        if (kind < 18) {
            assertEquals(model.put(k, v), m.put(k, v), "put");
        } else if (kind < 25) {
            model.put(k, v);
            m.set(k, v); // a blind write: the old value is not read
        } else if (kind < 45) {
            assertEquals(model.get(k), m.get(k), "get");
        } else if (kind < 50) {
            assertEquals(model.remove(k), m.remove(k), "remove");
        } else if (kind < 55) {
            assertEquals(model.remove(k) != null, m.delete(k), "delete");
        } else if (kind < 60) {
            assertEquals(model.putIfAbsent(k, v), m.putIfAbsent(k, v), "putIfAbsent");
        } else if (kind < 63) {
            assertEquals(model.replace(k, v), m.replace(k, v), "replace");
        } else if (kind < 66) {
            String old = r.nextBoolean() ? model.get(k) : v;
            if (old != null) {
                assertEquals(model.replace(k, old, v + "x"), m.replace(k, old, v + "x"), "replace(k, old, new)");
            }
        } else if (kind < 69) {
            String old = r.nextBoolean() ? model.get(k) : v;
            if (old != null) {
                assertEquals(model.remove(k, old), m.remove(k, old), "remove(k, v)");
            }
        } else if (kind < 74) {
            boolean drop = r.nextInt(4) == 0;
            java.util.function.BiFunction<String, String, String> f = (key, old) -> drop ? null
                    : (old == null ? "c" : old.length() > 40 ? "c" : old + "c");
            assertEquals(model.compute(k, f), m.compute(k, f), "compute");
        } else if (kind < 77) {
            assertEquals(model.computeIfAbsent(k, key -> v), m.computeIfAbsent(k, key -> v), "computeIfAbsent");
        } else if (kind < 80) {
            boolean drop = r.nextInt(3) == 0;
            java.util.function.BiFunction<String, String, String> f = (key, old) -> drop ? null : old + "p";
            assertEquals(model.computeIfPresent(k, f), m.computeIfPresent(k, f), "computeIfPresent");
        } else if (kind < 84) {
            java.util.function.BiFunction<String, String, String> f = (a, b) -> a.length() > 30 ? null : a + b.charAt(0);
            assertEquals(model.merge(k, v, f), m.merge(k, v, f), "merge");
        } else if (kind < 90) {
            assertEquals(model.containsKey(k), m.containsKey(k), "containsKey");
        } else if (kind < 95) {
            Map<String, String> batch = new HashMap<>();
            int n = 1 + r.nextInt(20);
            for (int i = 0; i < n; i++) {
                batch.put("k" + r.nextInt(keySpace), value(r, bigEvery, pastFirstRead));
            }
            model.putAll(batch);
            m.putAll(batch);
            reached = "putAll";
        } else if (kind < 98) {
            assertEquals(model.size(), m.size(), "size");
        } else if (kind < 99) {
            if (r.nextInt(20) == 0) {
                model.clear();
                m.clear();
                reached = "clear";
            } else if (model.size() < 5000) {
                reached = "iteration";
                // iterate, and remove some entries through the iterator
                Map<String, String> seen = new HashMap<>();
                List<String> removed = new ArrayList<>();
                if (r.nextBoolean()) {
                    // keys only: read without their values
                    Set<String> keys = new HashSet<>();
                    for (String key : m.keySet()) {
                        if (!keys.add(key)) {
                            throw new AssertionError("key iteration returned " + key + " twice");
                        }
                    }
                    assertEquals(model.keySet(), keys, "key iteration");
                }
                for (Iterator<Map.Entry<String, String>> it = m.entrySet().iterator(); it.hasNext();) {
                    Map.Entry<String, String> e = it.next();
                    if (seen.put(e.getKey(), e.getValue()) != null) {
                        throw new AssertionError("iteration returned " + e.getKey() + " twice");
                    }
                    if (r.nextInt(8) == 0) {
                        it.remove();
                        removed.add(e.getKey());
                    }
                }
                assertEquals(model, seen, "iteration");
                removed.forEach(model::remove);
            }
        } else {
            if (model.size() < 5000) {
                String probe = r.nextBoolean() ? v : model.values().stream().findAny().orElse(v);
                assertEquals(model.containsValue(probe), m.containsValue(probe), "containsValue");
            }
        }
        if (!Objects.equals(model.size(), m.size())) {
            throw new AssertionError("size " + m.size() + ", model " + model.size());
        }
        return reached;
    }
}
