package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.StorageMethod;
import org.htod.WriteBatch;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Random operations through the write layer checked one by one against a model (a HashMap of
 * value, version and expiry per key, and a clock the test moves): every kind of write of the map
 * API, versioned puts, batches over two maps, time to live and sweeps, with lookups, sizes and
 * whole iterations compared, and from time to time a checkpoint, a clean close and reopen, or a
 * power loss and recovery (after a sync below SYNC), after which the store must hold the model
 * exactly and verify. The runs take the heap's storage methods in turn. The log (64 KiB) wraps
 * and the small write buffer is installed often, so the state the checks see is spread over the
 * buffer, the log and the tables. A failure names the seed, durability, storage method and
 * operation.
 */
class LogModeRandomOpsTest {
    private static final long LOG = LoggedOpen.MIN_LOG;

    /** A clock the test moves: entries expire when it says. */
    private static final class TestClock extends Clock {
        long millis = 1_000_000;

        @Override
        public long millis() {
            return millis;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }

        @Override
        public ZoneId getZone() {
            return ZoneId.of("UTC");
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    /** A key's state in the model. */
    private record E(String value, long version, long expiry) {
        boolean liveAt(long now) {
            return expiry == 0 || expiry > now;
        }
    }

    @Test
    void randomOperationsMatchAModelAcrossReopensAndCrashes() {
        int ops = 5000 * LogStores.scale();
        Map<String, Integer> tally = new TreeMap<>();
        int run = 0;
        for (Durability d : Durability.values()) {
            for (int keys : new int[] {40, 1500}) {
                long seed = 0x0DE15000L + run++;
                Run r = new Run(seed, d, StorageMethod.values()[run % 3], keys, tally);
                try {
                    r.run(ops);
                } catch (Throwable e) {
                    throw new AssertionError("seed=" + seed + ", " + d + ", " + r.method + ", " + keys
                            + " keys, operation " + r.op + " (" + r.what + "): " + e, e);
                }
            }
        }
        System.out.println("LogModeRandomOpsTest: " + run + " runs of " + ops + " operations: " + tally);
        for (String what : new String[] {"clean reopen", "crash reopen", "checkpoint", "batch", "sweep", "iteration"}) {
            assertTrue(tally.getOrDefault(what, 0) >= 6, what + ": " + tally);
        }
    }

    private static final class Run {
        final SplittableRandom r;
        final Durability durability;
        /** The heap's storage method, kept by the container from the first open. */
        final StorageMethod method;
        final int keys;
        final Map<String, Integer> tally;
        final TestClock clock = new TestClock();
        final MemoryDevice disk = new MemoryDevice();
        final Map<String, Map<String, E>> model = new TreeMap<>();
        CrashDevice dev;
        HtodStore store;
        final Map<String, HtodMap<String, String>> maps = new HashMap<>();
        int op;
        String what = "";

        /** Also the seed of the store's hash keys, so that the run's buckets replay with it. */
        final long seed;

        Run(long seed, Durability durability, StorageMethod method, int keys, Map<String, Integer> tally) {
            this.seed = seed;
            this.r = new SplittableRandom(seed);
            this.durability = durability;
            this.method = method;
            this.keys = keys;
            this.tally = tally;
            model.put("m1", new HashMap<>());
            model.put("m2", new HashMap<>());
        }

        /**
         * Values placed by their writers from this many bytes (0: none), drawn at each open, so
         * that a store reopens with placing turned on, off, or at another size.
         */
        private static final int[] PLACE_FROM = {0, 1, 100};

        /** No cache; one whose entry cache evicts all the time and whose slots fit small arrays only; a large one. */
        private static final long[] CACHE_SIZES = {0, 16 << 10, 1 << 20};

        Htod.Builder builder(BlockDevice d) {
            Htod.Builder b = Htod.builder(d).storageMethod(method).grain(64).logSize(LOG).bufferSize(64 << 10)
                    .durability(durability).syncInterval(Duration.ofMillis(5)).clock(clock).loadFactor(0.5)
                    .cacheSize(CACHE_SIZES[r.nextInt(CACHE_SIZES.length)])
                    .placeValuesFrom(PLACE_FROM[r.nextInt(PLACE_FROM.length)]);
            return LayerAccess.hashKeySeed(LayerAccess.doublingMinBatch(LayerAccess.installBatch(b, 4 + r.nextInt(60)), 8),
                    seed);
        }

        void open() {
            dev = new CrashDevice(disk.reopen());
            store = builder(dev).open();
            maps.clear();
            for (String m : model.keySet()) {
                maps.put(m, store.map(m, Codec.string(), Codec.string()));
            }
        }

        void count(String what) {
            tally.merge(what, 1, Integer::sum);
        }

        void run(int ops) {
            open();
            for (op = 0; op < ops; op++) {
                step();
            }
            what = "final close";
            store.close();
            open();
            compareAll();
            LogStores.verify(store);
            store.close();
        }

        String key() {
            return "k" + r.nextInt(keys);
        }

        String value() {
            return "v" + op + "x".repeat(r.nextInt(8) == 0 ? 200 + r.nextInt(600) : r.nextInt(12));
        }

        long now() {
            return clock.millis;
        }

        /** The live state of a key in the model, or null. */
        E live(String m, String k) {
            E e = model.get(m).get(k);
            return e != null && e.liveAt(now()) ? e : null;
        }

        String liveValue(String m, String k) {
            E e = live(m, k);
            return e == null ? null : e.value;
        }

        void set(String m, String k, String v, long expiry) {
            E cur = live(m, k);
            model.get(m).put(k, new E(v, cur == null ? 1 : cur.version + 1, expiry));
        }

        void step() {
            String m = r.nextBoolean() ? "m1" : "m2";
            HtodMap<String, String> map = maps.get(m);
            String k = key();
            String v = value();
            int kind = r.nextInt(200);
            if (kind < 30) {
                what = "put " + m + "/" + k;
                assertEquals(liveValue(m, k), map.put(k, v), what);
                set(m, k, v, 0);
            } else if (kind < 40) {
                what = "set " + m + "/" + k; // a blind write: the version still follows the live entry's
                map.set(k, v);
                set(m, k, v, 0);
            } else if (kind < 48) {
                long ttl = 1 + r.nextInt(50);
                what = "put " + m + "/" + k + " for " + ttl + " ms";
                assertEquals(liveValue(m, k), map.put(k, v, Duration.ofMillis(ttl)), what);
                set(m, k, v, now() + ttl);
            } else if (kind < 56) {
                what = "putIfAbsent " + m + "/" + k;
                String old = liveValue(m, k);
                assertEquals(old, map.putIfAbsent(k, v), what);
                if (old == null) {
                    set(m, k, v, 0);
                }
            } else if (kind < 62) {
                what = "replace " + m + "/" + k;
                String old = liveValue(m, k);
                assertEquals(old, map.replace(k, v), what);
                if (old != null) {
                    set(m, k, v, 0);
                }
            } else if (kind < 66) {
                String old = r.nextBoolean() ? liveValue(m, k) : "nope";
                what = "replace " + m + "/" + k + " if " + old;
                boolean should = old != null && old.equals(liveValue(m, k));
                assertEquals(should, map.replace(k, old == null ? "nope" : old, v), what);
                if (should) {
                    set(m, k, v, 0);
                }
            } else if (kind < 74) {
                what = "remove " + m + "/" + k;
                String old = liveValue(m, k);
                assertEquals(old, map.remove(k), what);
                if (old != null) {
                    model.get(m).remove(k);
                }
            } else if (kind < 82) {
                what = "delete " + m + "/" + k;
                String old = liveValue(m, k);
                assertEquals(old != null, map.delete(k), what);
                if (old != null) {
                    model.get(m).remove(k);
                }
            } else if (kind < 86) {
                String old = r.nextBoolean() ? liveValue(m, k) : "nope";
                what = "remove " + m + "/" + k + " if " + old;
                boolean should = old != null && old.equals(liveValue(m, k));
                assertEquals(should, map.remove(k, old == null ? "nope" : old), what);
                if (should) {
                    model.get(m).remove(k);
                }
            } else if (kind < 94) {
                what = "compute " + m + "/" + k;
                String old = liveValue(m, k);
                String nv = old == null ? "c" : old.length() > 30 ? null : old + "c";
                assertEquals(nv, map.compute(k, (key, o) -> o == null ? "c" : o.length() > 30 ? null : o + "c"), what);
                if (nv == null) {
                    if (old != null) {
                        model.get(m).remove(k);
                    }
                } else {
                    set(m, k, nv, 0);
                }
            } else if (kind < 98) {
                what = "merge " + m + "/" + k;
                String old = liveValue(m, k);
                String nv = old == null ? "m" : old.length() > 30 ? null : old + "m";
                assertEquals(nv, map.merge(k, "m", (a, b) -> a.length() > 30 ? null : a + b), what);
                if (nv == null) {
                    model.get(m).remove(k);
                } else {
                    set(m, k, nv, 0);
                }
            } else if (kind < 116) {
                E cur = live(m, k);
                long ver = cur == null ? 1 + r.nextInt(5) : Math.max(1, cur.version - 2 + r.nextInt(5));
                what = "putVersioned " + m + "/" + k + " at " + ver + " over " + cur;
                boolean applies = cur == null || ver > cur.version;
                assertEquals(applies, map.putVersioned(k, v, ver), what);
                if (applies) {
                    model.get(m).put(k, new E(v, ver, 0));
                }
            } else if (kind < 134) {
                batch();
            } else if (kind < 138) {
                what = "putAll " + m;
                Map<String, String> all = new LinkedHashMap<>();
                int n = 1 + r.nextInt(20);
                for (int i = 0; i < n; i++) {
                    all.put(key(), value());
                }
                map.putAll(all);
                all.forEach((kk, vv) -> set(m, kk, vv, 0));
            } else if (kind < 139 && r.nextInt(8) == 0) {
                what = "clear " + m;
                map.clear();
                model.get(m).clear(); // expired entries too, as in direct mode
            } else if (kind < 146) {
                long by = r.nextInt(30);
                what = "the clock moves " + by + " ms";
                clock.millis += by;
            } else if (kind < 149) {
                what = "sweepExpired " + m;
                long expired = model.get(m).values().stream().filter(e -> !e.liveAt(now())).count();
                assertEquals(expired, map.sweepExpired(), what);
                model.get(m).values().removeIf(e -> !e.liveAt(now()));
                count("sweep");
            } else if (kind < 185) {
                what = "get " + m + "/" + k;
                assertEquals(liveValue(m, k), map.get(k), what);
                assertEquals(liveValue(m, k) != null, map.containsKey(k), what);
                E e = live(m, k);
                assertEquals(e == null ? 0 : e.version, map.version(k), "version of " + m + "/" + k);
            } else if (kind < 190) {
                what = "size of " + m;
                assertEquals(model.get(m).size(), map.size(), what);
            } else if (kind < 192) {
                what = "iteration";
                compareAll();
                count("iteration");
            } else if (kind < 194) {
                what = "checkpoint";
                store.checkpoint();
                count("checkpoint");
            } else if (kind < 195) {
                what = "clean reopen";
                store.close();
                open();
                assertTrue(store.recoveryReport().clean(), "reopened after a close: " + store.recoveryReport());
                compareAll();
                count(what);
            } else if (kind < 196) {
                what = "crash reopen";
                if (durability != Durability.SYNC) {
                    store.sync();
                }
                dev.crash(r.nextLong());
                LogStores.closeQuietly(store);
                open();
                assertTrue(!store.recoveryReport().clean(), "reopened after a crash: " + store.recoveryReport());
                compareAll();
                LogStores.verify(store);
                count(what);
            } else if (kind < 197) {
                what = "verify";
                LogStores.verify(store);
            } else {
                what = "version of " + m + "/" + k;
                E e = live(m, k);
                assertEquals(e == null ? 0 : e.version, map.version(k), what);
            }
        }

        /** A batch over both maps: puts (some versioned) and removes, applied in order to the model. */
        void batch() {
            what = "batch";
            int n = 1 + r.nextInt(5);
            Map<String, Map<String, E>> after = new HashMap<>();
            model.forEach((m, c) -> after.put(m, new HashMap<>(c)));
            int applied = 0;
            List<String> desc = new ArrayList<>();
            try (WriteBatch b = store.batch()) {
                for (int i = 0; i < n; i++) {
                    String m = r.nextBoolean() ? "m1" : "m2";
                    String k = key();
                    E e = after.get(m).get(k);
                    E cur = e != null && e.liveAt(now()) ? e : null;
                    int kind = r.nextInt(10);
                    if (kind < 5) {
                        String v = value();
                        b.put(maps.get(m), k, v);
                        after.get(m).put(k, new E(v, cur == null ? 1 : cur.version + 1, 0));
                        applied++;
                        desc.add("put " + m + "/" + k);
                    } else if (kind < 7) {
                        b.remove(maps.get(m), k);
                        after.get(m).remove(k);
                        applied++;
                        desc.add("remove " + m + "/" + k);
                    } else {
                        long ver = cur == null ? 1 + r.nextInt(3) : Math.max(1, cur.version - 1 + r.nextInt(3));
                        String v = value();
                        b.putVersioned(maps.get(m), k, v, ver);
                        if (cur == null || ver > cur.version) {
                            after.get(m).put(k, new E(v, ver, 0));
                            applied++;
                        }
                        desc.add("putVersioned " + m + "/" + k + " at " + ver);
                    }
                }
                what = "batch " + desc;
                assertEquals(applied, b.commit(), what);
            }
            model.clear();
            model.putAll(new TreeMap<>(after));
            count("batch");
        }

        /** Every map, iterated and looked up, against the model. */
        void compareAll() {
            for (Map.Entry<String, Map<String, E>> me : model.entrySet()) {
                HtodMap<String, String> map = maps.get(me.getKey());
                Map<String, String> want = new TreeMap<>();
                me.getValue().forEach((k, e) -> {
                    if (e.liveAt(now())) {
                        want.put(k, e.value + "@" + e.version);
                    }
                });
                Map<String, String> found = new TreeMap<>();
                for (Map.Entry<String, String> e : map.entrySet()) {
                    found.put(e.getKey(), e.getValue() + "@" + map.version(e.getKey()));
                }
                if (!want.equals(found)) {
                    throw new AssertionError(what + ": map " + me.getKey() + " differs: " + LogModeCrashTest.diff(
                            Map.of("m", want), Map.of("m", found)));
                }
                assertEquals(me.getValue().size(), map.size(), what + ": size of " + me.getKey()
                        + " (expired entries count until swept)");
                for (Map.Entry<String, E> e : me.getValue().entrySet()) {
                    assertEquals(e.getValue().liveAt(now()) ? e.getValue().value : null, map.get(e.getKey()),
                            what + ": " + me.getKey() + "/" + e.getKey());
                }
            }
            assertEquals(new ArrayList<>(model.keySet()), store.mapNames().stream().sorted().toList());
            Objects.requireNonNull(store);
        }
    }
}
