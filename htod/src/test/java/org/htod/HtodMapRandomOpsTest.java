package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Random operations on an HtodMap checked one by one against a HashMap, with the store closed
 * and reopened (cleanly, or abandoned and recovered) from time to time, and verified each time.
 * Seeds vary the key space (from dense chains to several doublings), value sizes (some larger than
 * the first read of an entry), the storage method and the durability (NONE, with a sync before an
 * abandoned reopen, or SYNC). A failure names its seed and operation.
 */
class HtodMapRandomOpsTest {
    private static final int SEEDS = 20;

    @Test
    void randomOperationsMatchAHashMap() {
        long total = 0;
        int opsPerSeed = 50_000 * TestStores.scale();
        for (int i = 0; i < SEEDS; i++) {
            long seed = 0x5eed0000L + i;
            total += run(seed, opsPerSeed);
        }
        assertTrue(total >= 1_000_000, "ran " + total + " operations");
    }

    private static final StorageMethod[] METHODS = StorageMethod.values();

    static long run(long seed, int ops) {
        SplittableRandom r = new SplittableRandom(seed);
        int keySpace = new int[] {16, 300, 3000, 20_000}[r.nextInt(4)];
        int bigEvery = r.nextInt(2) == 0 ? 0 : 50;
        StorageMethod method = METHODS[r.nextInt(METHODS.length)];
        long cache = new long[] {0, 16 << 10, 8 << 20}[r.nextInt(3)];
        Durability durability = r.nextInt(4) == 0 ? Durability.SYNC : Durability.NONE;
        MemoryDevice dev = new MemoryDevice();
        Map<String, String> model = new HashMap<>();
        HtodStore store = open(dev, method, cache, durability);
        HtodMap<String, String> m = store.map("random", Codec.string(), Codec.string());
        int op = 0;
        try {
            for (op = 0; op < ops; op++) {
                if (r.nextInt(10_000) == 0 || op == ops - 1) {
                    boolean clean = r.nextBoolean();
                    if (clean) {
                        TestStores.verify(store);
                        store.close();
                    } else if (durability == Durability.NONE) {
                        store.sync(); // then abandoned as if the process died: what it synced is on the device
                    } // else abandoned as it is: with SYNC every write that returned is on the device
                    dev = dev.reopen();
                    store = open(dev, method, cache, durability);
                    assertEquals(clean, store.recoveryReport().clean(), store.recoveryReport().toString());
                    m = store.map("random", Codec.string(), Codec.string());
                    assertEquals(model.size(), m.size(), "size after reopen");
                    TestStores.verify(store);
                    continue;
                }
                step(r, m, model, keySpace, bigEvery);
            }
            assertEquals(model, new HashMap<>(m));
            TestStores.verify(store);
            store.close();
        } catch (Throwable e) {
            throw new AssertionError("seed=" + seed + " op=" + op + " keySpace=" + keySpace + " method=" + method
                    + " cache=" + cache + " durability=" + durability + ": " + e, e);
        }
        return ops;
    }

    private static HtodStore open(MemoryDevice dev, StorageMethod method, long cache, Durability durability) {
        return TestStores.small(dev).storageMethod(method).cacheSize(cache).durability(durability).open();
    }

    private static String value(SplittableRandom r, int bigEvery) {
        int len = bigEvery > 0 && r.nextInt(bigEvery) == 0 ? 500 + r.nextInt(2000) : r.nextInt(12);
        StringBuilder b = new StringBuilder(len + 4).append('v');
        for (int i = 0; i < len; i++) {
            b.append((char) ('a' + r.nextInt(26)));
        }
        return b.toString();
    }

    static void step(SplittableRandom r, HtodMap<String, String> m, Map<String, String> model, int keySpace,
            int bigEvery) {
        String k = "k" + r.nextInt(keySpace);
        String v = value(r, bigEvery);
        int kind = r.nextInt(100);
        if (kind < 25) {
            assertEquals(model.put(k, v), m.put(k, v), "put");
        } else if (kind < 45) {
            assertEquals(model.get(k), m.get(k), "get");
        } else if (kind < 55) {
            assertEquals(model.remove(k), m.remove(k), "remove");
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
                batch.put("k" + r.nextInt(keySpace), value(r, bigEvery));
            }
            model.putAll(batch);
            m.putAll(batch);
        } else if (kind < 98) {
            assertEquals(model.size(), m.size(), "size");
        } else if (kind < 99) {
            if (r.nextInt(20) == 0) {
                model.clear();
                m.clear();
            } else if (model.size() < 5000) {
                // iterate, and remove some entries through the iterator
                Map<String, String> seen = new HashMap<>();
                List<String> removed = new ArrayList<>();
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
    }
}
