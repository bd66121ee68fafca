package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.StorageMethod;
import org.htod.WriteBatch;
import org.htod.core.HtodException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Power loss under the write layer at durability SYNC, with several writer threads: each chain
 * of crash points runs one store on one device through a sequence of power cuts, reopening after
 * each what the last one left.
 *
 * <p>A workload point opens the store, arms a power cut at a random write or sync of the device
 * (the write at the cut may land whole, torn or not at all; the crash keeps any subset of the
 * unsynced writes) and runs three writers: puts and removes of keys each owns, {@code WriteBatch}es
 * over two maps (every batch writes a key in both, so that a partial batch shows), {@code
 * putVersioned} of shared keys with versions from one counter, and now and then a checkpoint. A
 * workload that ends before the cut closes the store, so that some cuts fall in the clean close.
 * The small log (64 KiB) wraps every few points, the small write buffer and install batches make
 * the flusher install often, and a low load factor with small doubling steps makes the maps
 * double in many steps. Consecutive chains take the heap's storage methods in turn (TS, PL,
 * PFL), whose recoveries differ. A recovery point arms the cut among the first calls of the open,
 * its flusher's first work and a checkpoint and close, with no writes.
 *
 * <p>After each cut, a copy of the platter is recovered and checked: every write whose call
 * returned is there, each key's value (and version) is the last one acknowledged or the one of
 * the call the cut interrupted, the interrupted batch is all there or not at all, no versioned
 * key holds a version below one acknowledged (or seen) before, and the store verifies. Then the
 * copy is closed and reopened (it must be clean and the same), and the next point opens the
 * original, recovering it a second time: it must hold exactly what the first recovery found,
 * also after any number of cuts during recovery points in between.
 *
 * <p>The writers are threads, so a chain's seed fixes its cut points and its operations but not
 * their interleaving; a failure names the seed and point, and the phase of the cut.
 */
class LogModeCrashTest {
    static final long LOG = LoggedOpen.MIN_LOG;
    private static final int WRITERS = 3;
    private static final int OPS = 140;
    private static final int OWN_KEYS = 100;
    private static final int BATCH_KEYS = 30;
    private static final int SHARED_KEYS = 50;
    private static final String[] MAPS = {"a", "v", "x", "y"};

    @Test
    void acknowledgedWritesSurvivePowerLossAtSync() {
        int chains = 36 * LogStores.scale();
        int points = 34;
        Tally tally = new Tally();
        for (int c = 0; c < chains; c++) {
            long seed = 0xC0FFEE00L + c;
            Chain chain = new Chain(seed, tally);
            try {
                chain.run(points);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ", " + chain.method + ", point " + chain.point + " ("
                        + chain.what + "): " + e, e);
            }
        }
        System.out.println("LogModeCrashTest: " + chains + " chains of " + points + " points: " + tally);
        assertTrue(tally.cuts >= 1000L * LogStores.scale(), "power cuts: " + tally);
        for (String p : new String[] {"group commit", "install", "checkpoint", "doubling", "close", "recovery"}) {
            assertTrue(tally.phases.getOrDefault(p, 0) >= 10, "cuts in " + p + ": " + tally);
        }
        assertTrue(tally.lapEdge >= 10, "cuts at a lap's edge of the log: " + tally);
        assertTrue(tally.afterLap >= 500, "cuts after the log wrapped: " + tally);
        assertTrue(tally.cleanCloses >= 10, "workloads that closed cleanly: " + tally);
    }

    /**
     * The same with placed values: a value of 100 bytes or more (a quarter of the plain puts, the
     * versioned puts of that size) is written into the heap by its writer before its record,
     * which names the block; the crash may keep the record and lose the block of the last commit.
     */
    @Test
    void acknowledgedPlacedValuesSurvivePowerLossAtSync() {
        int chains = 12 * LogStores.scale();
        int points = 34;
        Tally tally = new Tally();
        for (int c = 0; c < chains; c++) {
            long seed = 0x9ACED00L + c;
            Chain chain = new Chain(seed, tally, 100);
            try {
                chain.run(points);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ", " + chain.method + ", placed, point " + chain.point
                        + " (" + chain.what + "): " + e, e);
            }
        }
        System.out.println("LogModeCrashTest, placed values: " + chains + " chains of " + points + " points: " + tally);
        assertTrue(tally.cuts >= 300L * LogStores.scale(), "power cuts: " + tally);
        for (String p : new String[] {"group commit", "install", "checkpoint", "recovery"}) {
            assertTrue(tally.phases.getOrDefault(p, 0) >= 5, "cuts in " + p + ": " + tally);
        }
    }

    /** What the chains did, for the coverage checks and the report. */
    static final class Tally {
        long cuts;
        long lapEdge;
        long afterLap;
        long cleanCloses;
        long acked;
        final Map<String, Integer> phases = new TreeMap<>();

        void cut(PowerCutTracer dev, long laps) {
            cuts++;
            phases.merge(dev.phase(), 1, Integer::sum);
            if (dev.cutAtLapEdge()) {
                lapEdge++;
            }
            if (laps > 0) {
                afterLap++;
            }
        }

        @Override
        public String toString() {
            return cuts + " cuts " + phases + ", " + lapEdge + " at a lap's edge, " + afterLap + " after the log wrapped, "
                    + cleanCloses + " clean closes with no cut, " + acked + " writes acknowledged";
        }
    }

    static Htod.Builder builder(BlockDevice dev) {
        return builder(dev, 0);
    }

    static Htod.Builder builder(BlockDevice dev, int placeFrom) {
        return builder(dev, placeFrom, StorageMethod.TS);
    }

    /** The chains' stores; {@code method} matters only to a new store, as the container keeps it. */
    static Htod.Builder builder(BlockDevice dev, int placeFrom, StorageMethod method) {
        Htod.Builder b = Htod.builder(dev).storageMethod(method).grain(64).logSize(LOG).bufferSize(64 << 10)
                .durability(Durability.SYNC).loadFactor(0.25).cacheSize(64 << 10).placeValuesFrom(placeFrom);
        return LayerAccess.doublingMinBatch(LayerAccess.installBatch(b, 48), 8);
    }

    /** One store through a sequence of crash points. */
    private static final class Chain {
        final long seed;
        final SplittableRandom r;
        final Tally tally;
        final MemoryDevice disk = new MemoryDevice();
        final AtomicLong versions = new AtomicLong();
        /** Values of at least this many bytes are placed (0: none). */
        final int placeFrom;
        /** The heap's storage method, by the seed: consecutive chains take each in turn. */
        final StorageMethod method;
        /** What the store holds: exactly this, at the next open. */
        Map<String, Map<String, String>> base = emptyContent();
        /** Whether the next open must find the store closed cleanly; null when either may be. */
        Boolean clean = null;
        long laps;
        int point;
        String what = "";

        Chain(long seed, Tally tally) {
            this(seed, tally, 0);
        }

        Chain(long seed, Tally tally, int placeFrom) {
            this.seed = seed;
            this.r = new SplittableRandom(seed);
            this.tally = tally;
            this.placeFrom = placeFrom;
            this.method = StorageMethod.values()[(int) (seed % 3)];
        }

        void run(int points) {
            for (point = 0; point < points; point++) {
                if (point > 0 && r.nextInt(4) == 0) {
                    recoveryPoint();
                } else {
                    workloadPoint();
                }
            }
        }

        /** Opens the store on a new crash simulator over the platter and checks it holds {@link #base}. */
        HtodStore open(PowerCutTracer dev) {
            dev.opening = true;
            HtodStore s = LayerAccess.hashKeySeed(builder(dev, placeFrom, method), seed).open();
            dev.opening = false;
            if (clean != null) {
                assertEquals(clean, s.recoveryReport().clean(), "whether the store was closed cleanly: "
                        + s.recoveryReport());
            }
            return s;
        }

        void checkBase(HtodStore s, String when) {
            Map<String, Map<String, String>> found = LogStores.content(s);
            if (!found.equals(base)) {
                throw new AssertionError(when + ": the store holds\n  " + diff(base, found));
            }
        }

        void workloadPoint() {
            what = "workload";
            PowerCutTracer dev = new PowerCutTracer(disk.reopen(), LOG);
            HtodStore s = open(dev);
            if (point > 0) {
                checkBase(s, "reopened after point " + (point - 1));
            }
            LogStores.verify(s);
            Map<String, HtodMap<String, String>> maps = new HashMap<>();
            for (String name : MAPS) {
                maps.put(name, s.map(name, Codec.string(), Codec.string()));
            }
            // One point in five cuts the power in the close that follows the workload, or not at all.
            boolean cutInClose = point > 0 && r.nextInt(5) == 0;
            if (!cutInClose) {
                dev.crash().armPowerCut(1 + r.nextInt(point == 0 ? 1400 : 900), Counting.WRITES_AND_SYNCS,
                        CutWrite.IN_FLIGHT);
            }
            Map<String, Long> maxSeen = new ConcurrentHashMap<>();
            for (Map.Entry<String, String> e : base.get("v").entrySet()) {
                maxSeen.put(e.getKey(), versionOf(e.getValue()));
            }
            Map<Long, String> attempted = new ConcurrentHashMap<>();
            List<Writer> writers = new ArrayList<>();
            for (int t = 0; t < WRITERS; t++) {
                writers.add(new Writer(t, r.nextLong(), s, maps, base, versions, maxSeen, attempted));
            }
            runAll(writers);
            for (Writer w : writers) {
                tally.acked += w.acked;
            }
            if (dev.phase() == null) {
                what = "workload, closing";
                if (cutInClose) {
                    dev.crash().armPowerCut(1 + r.nextInt(250), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
                }
                dev.closing = true;
                try {
                    s.close();
                } catch (HtodException e) {
                    if (!LogStores.causedByPowerCut(e)) {
                        throw e;
                    }
                }
            }
            laps += dev.laps();
            if (dev.phase() == null) {
                what = "workload closed cleanly";
                tally.cleanCloses++;
                base = expected(writers, maxSeen);
                clean = true;
                return;
            }
            what = "workload cut in " + dev.phase();
            tally.cut(dev, laps);
            dev.crash().crash(r.nextLong());
            LogStores.closeQuietly(s);
            recoverCopy(writers, maxSeen, attempted);
        }

        /**
         * Recovers a copy of the platter: checks it against what the writers were told, verifies
         * it, closes and reopens it. What it holds is what the original must hold when reopened.
         */
        void recoverCopy(List<Writer> writers, Map<String, Long> maxSeen, Map<Long, String> attempted) {
            MemoryDevice copy = LogStores.copy(disk);
            Map<String, Map<String, String>> found;
            try (HtodStore s = LayerAccess.hashKeySeed(builder(copy, placeFrom, method), seed).open()) {
                found = LogStores.content(s);
                LogStores.verify(s);
            }
            check(found, writers, maxSeen, attempted);
            if (point % 3 == 0) {
                try (HtodStore s = LayerAccess.hashKeySeed(builder(copy.reopen(), placeFrom, method), seed).open()) {
                    assertTrue(s.recoveryReport().clean(), "closed cleanly after its recovery: " + s.recoveryReport());
                    Map<String, Map<String, String>> again = LogStores.content(s);
                    if (!again.equals(found)) {
                        throw new AssertionError("a recovered store closed and reopened holds\n  " + diff(found, again));
                    }
                }
            }
            base = found;
            clean = null; // the cut may have fallen after the close marked the store clean
        }

        /** A cut early in an open (its recovery, its flusher's first work), or in a checkpoint or close with no writes. */
        void recoveryPoint() {
            what = "recovery";
            PowerCutTracer dev = new PowerCutTracer(disk.reopen(), LOG);
            dev.crash().armPowerCut(1 + r.nextInt(40), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
            HtodStore s = null;
            try {
                s = open(dev);
                checkBase(s, "opened with a power cut armed, before the cut");
                s.checkpoint();
                dev.closing = true;
                s.close();
            } catch (HtodException e) {
                if (!LogStores.causedByPowerCut(e)) {
                    throw e;
                }
            } finally {
                dev.opening = false;
            }
            laps += dev.laps();
            if (dev.phase() == null) {
                clean = true;
                return;
            }
            what = "recovery point cut in " + dev.phase();
            tally.cut(dev, laps);
            dev.crash().crash(r.nextLong());
            LogStores.closeQuietly(s);
            clean = null;
        }

        /** The store's content after every writer's acknowledged writes, none cut. */
        Map<String, Map<String, String>> expected(List<Writer> writers, Map<String, Long> maxSeen) {
            Map<String, Map<String, String>> out = emptyContent();
            for (Writer w : writers) {
                for (String m : new String[] {"a", "x", "y"}) {
                    out.get(m).putAll(w.own.get(m));
                }
            }
            // Every versioned put returned: each key holds the highest version put.
            maxSeen.forEach((k, v) -> out.get("v").put(k, "v" + v + "@" + v));
            return out;
        }

        /** Checks a recovered store against what the writers were told; see the class comment. */
        void check(Map<String, Map<String, String>> found, List<Writer> writers, Map<String, Long> maxSeen,
                Map<Long, String> attempted) {
            assertEquals(List.of(MAPS), new ArrayList<>(found.keySet()), "the maps");
            for (String m : new String[] {"a", "x", "y"}) {
                for (String k : found.get(m).keySet()) {
                    int t = k.charAt(1) - '0';
                    if (t < 0 || t >= WRITERS || !writers.get(t).owns(m, k)) {
                        throw new AssertionError("map " + m + " holds " + k + ", which no writer wrote");
                    }
                }
            }
            for (Writer w : writers) {
                w.check(found);
            }
            // No part of a batch without the rest: both maps of every batched key agree.
            Map<String, String> x = found.get("x");
            Map<String, String> y = found.get("y");
            if (!x.equals(y)) {
                throw new AssertionError("the batch maps differ (a batch partly there): x=" + x + ", y=" + y);
            }
            for (Map.Entry<String, String> e : found.get("v").entrySet()) {
                String k = e.getKey();
                long v = versionOf(e.getValue());
                if (!e.getValue().equals("v" + v + "@" + v)) {
                    throw new AssertionError("versioned key " + k + " holds " + e.getValue() + ": value and version differ");
                }
                Long seen = maxSeen.get(k);
                if (seen != null && v < seen) {
                    throw new AssertionError("versioned key " + k + " went back to version " + v + " after version " + seen
                            + " was acknowledged or seen");
                }
                Long before = versionOf(base.get("v").get(k));
                if ((before == null || v > before) && !k.equals(attempted.get(v))) {
                    throw new AssertionError("versioned key " + k + " holds version " + v + ", never put to it");
                }
            }
            for (String k : maxSeen.keySet()) {
                if (!found.get("v").containsKey(k)) {
                    throw new AssertionError("versioned key " + k + " acknowledged at version " + maxSeen.get(k)
                            + " is gone");
                }
            }
        }
    }

    static Long versionOf(String valueAtVersion) {
        return valueAtVersion == null ? null : Long.parseLong(valueAtVersion.substring(valueAtVersion.lastIndexOf('@') + 1));
    }

    static Map<String, Map<String, String>> emptyContent() {
        return emptyContent(MAPS);
    }

    static Map<String, Map<String, String>> emptyContent(String... maps) {
        Map<String, Map<String, String>> out = new TreeMap<>();
        for (String m : maps) {
            out.put(m, new TreeMap<>());
        }
        return out;
    }

    /** The differences between two contents, for messages. */
    static String diff(Map<String, Map<String, String>> want, Map<String, Map<String, String>> found) {
        List<String> out = new ArrayList<>();
        TreeMap<String, Map<String, String>> all = new TreeMap<>(want);
        found.forEach(all::putIfAbsent);
        for (String m : all.keySet()) {
            Map<String, String> w = want.getOrDefault(m, Map.of());
            Map<String, String> f = found.getOrDefault(m, Map.of());
            TreeMap<String, String> keys = new TreeMap<>(w);
            f.forEach(keys::putIfAbsent);
            for (String k : keys.keySet()) {
                if (!Objects.equals(w.get(k), f.get(k))) {
                    out.add(m + "/" + k + ": expected " + w.get(k) + ", found " + f.get(k));
                }
            }
        }
        return out.size() > 20 ? out.subList(0, 20) + " and " + (out.size() - 20) + " more" : out.toString();
    }

    /** Runs the writers to their end, or their first error; fails on an error the power cut did not cause. */
    static void runAll(List<? extends Runnable> writers) {
        List<Thread> threads = new ArrayList<>();
        Map<Thread, Throwable> failures = new ConcurrentHashMap<>();
        for (Runnable w : writers) {
            Thread th = new Thread(w, "writer");
            th.setUncaughtExceptionHandler(failures::put);
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            try {
                th.join(120_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (th.isAlive()) {
                AssertionError e = new AssertionError("a writer hangs");
                e.setStackTrace(th.getStackTrace());
                throw e;
            }
        }
        for (Throwable e : failures.values()) {
            throw new AssertionError("a writer failed: " + e, e);
        }
    }

    /**
     * One writer thread: its own keys (in "a", and batched in "x" and "y", named after it) whose
     * every acknowledged state it knows, and versioned puts of the shared keys of "v".
     */
    private static final class Writer implements Runnable {
        final int t;
        final SplittableRandom r;
        final HtodStore store;
        final Map<String, HtodMap<String, String>> maps;
        final AtomicLong versions;
        final Map<String, Long> maxSeen;
        final Map<Long, String> attempted;
        /** Per map, this writer's keys as acknowledged: key to value@version. */
        final Map<String, Map<String, String>> own = new HashMap<>();
        /** The changes of the call in flight: map/key to the state it gives (null: absent). */
        Map<String, String> inFlight = Map.of();
        long acked;

        Writer(int t, long seed, HtodStore store, Map<String, HtodMap<String, String>> maps,
                Map<String, Map<String, String>> base, AtomicLong versions, Map<String, Long> maxSeen,
                Map<Long, String> attempted) {
            this.t = t;
            this.r = new SplittableRandom(seed);
            this.store = store;
            this.maps = maps;
            this.versions = versions;
            this.maxSeen = maxSeen;
            this.attempted = attempted;
            for (String m : new String[] {"a", "x", "y"}) {
                Map<String, String> mine = new HashMap<>();
                base.get(m).forEach((k, v) -> {
                    if (k.charAt(1) - '0' == t) {
                        mine.put(k, v);
                    }
                });
                own.put(m, mine);
            }
        }

        boolean owns(String map, String key) {
            return key.startsWith((map.equals("a") ? "a" : "b") + t + "-");
        }

        @Override
        public void run() {
            try {
                for (int op = 0; op < OPS; op++) {
                    step(op);
                    acked++;
                }
            } catch (HtodException e) {
                if (!LogStores.causedByPowerCut(e)) {
                    throw e;
                }
            }
        }

        private String value(int op) {
            return "t" + t + "-" + op + "-" + "p".repeat(r.nextInt(4) == 0 ? 300 : r.nextInt(40));
        }

        private static String next(String cur, String value) {
            return value + "@" + (cur == null ? 1 : versionOf(cur) + 1);
        }

        private void step(int op) {
            int kind = r.nextInt(100);
            if (kind < 40) {
                String k = "a" + t + "-" + r.nextInt(OWN_KEYS);
                String v = value(op);
                String after = next(own.get("a").get(k), v);
                inFlight = Map.of("a/" + k, after);
                maps.get("a").put(k, v);
                own.get("a").put(k, after);
            } else if (kind < 50) {
                String k = "a" + t + "-" + r.nextInt(OWN_KEYS);
                Map<String, String> f = new HashMap<>();
                f.put("a/" + k, null);
                inFlight = f;
                maps.get("a").remove(k);
                own.get("a").remove(k);
            } else if (kind < 72) {
                Map<String, String> x = new HashMap<>(own.get("x"));
                Map<String, String> y = new HashMap<>(own.get("y"));
                Map<String, String> f = new HashMap<>();
                try (WriteBatch b = store.batch()) {
                    int n = 1 + r.nextInt(3);
                    for (int i = 0; i < n; i++) {
                        String k = "b" + t + "-" + r.nextInt(BATCH_KEYS);
                        if (r.nextInt(10) < 7) {
                            String v = value(op) + "." + i;
                            b.put(maps.get("x"), k, v).put(maps.get("y"), k, v);
                            x.put(k, next(x.get(k), v));
                            y.put(k, next(y.get(k), v));
                        } else {
                            b.remove(maps.get("x"), k).remove(maps.get("y"), k);
                            x.remove(k);
                            y.remove(k);
                        }
                        f.put("x/" + k, x.get(k));
                        f.put("y/" + k, y.get(k));
                    }
                    inFlight = f;
                    b.commit();
                }
                own.put("x", x);
                own.put("y", y);
            } else if (kind < 97) {
                String k = "s" + r.nextInt(SHARED_KEYS);
                long v = versions.incrementAndGet();
                attempted.put(v, k);
                inFlight = Map.of();
                maps.get("v").putVersioned(k, "v" + v, v);
                // Applied or not, a version at least v was durable when the call returned: at
                // SYNC a writer keeps the key's lock until its change is durable.
                maxSeen.merge(k, v, Math::max);
            } else {
                inFlight = Map.of();
                store.checkpoint();
            }
            inFlight = Map.of();
        }

        /** This writer's keys in a recovered store: as acknowledged, or as the call in flight left them, all or none. */
        void check(Map<String, Map<String, String>> found) {
            int asBefore = 0;
            int asAfter = 0;
            for (Map.Entry<String, String> e : inFlight.entrySet()) {
                String[] mk = e.getKey().split("/", 2);
                String before = own.get(mk[0]).get(mk[1]);
                String now = found.get(mk[0]).get(mk[1]);
                if (Objects.equals(before, e.getValue())) {
                    continue;
                }
                if (Objects.equals(now, before)) {
                    asBefore++;
                } else if (Objects.equals(now, e.getValue())) {
                    asAfter++;
                } else {
                    throw new AssertionError(e.getKey() + " holds " + now + "; acknowledged " + before
                            + ", and the call in flight would make it " + e.getValue());
                }
            }
            if (asBefore > 0 && asAfter > 0) {
                throw new AssertionError("the call in flight is partly there: " + inFlight + ", before " + own);
            }
            for (String m : new String[] {"a", "x", "y"}) {
                Map<String, String> f = found.get(m);
                Map<String, String> mine = own.get(m);
                for (Map.Entry<String, String> e : mine.entrySet()) {
                    if (!inFlight.containsKey(m + "/" + e.getKey()) && !e.getValue().equals(f.get(e.getKey()))) {
                        throw new AssertionError(m + "/" + e.getKey() + " acknowledged as " + e.getValue() + ", found "
                                + f.get(e.getKey()));
                    }
                }
                for (String k : f.keySet()) {
                    if (owns(m, k) && !mine.containsKey(k) && !inFlight.containsKey(m + "/" + k)) {
                        throw new AssertionError(m + "/" + k + " holds " + f.get(k) + ", acknowledged as removed or never"
                                + " written");
                    }
                }
            }
        }
    }
}
