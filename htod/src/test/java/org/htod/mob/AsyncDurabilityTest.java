package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.WriteBatch;
import org.htod.core.HtodException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Power loss at durability ASYNC: what a crash may lose is a tail of what was acknowledged, never
 * more than the stated window and never a torn state.
 *
 * <p>The window ("a write that returned more than one interval plus one sync ago is durable") is
 * a statement about time, which a test must not assert. It is tested as what it stands on, in
 * counts of the log's group commits (see {@link PowerCutTracer}): a write that returned before
 * round {@code n} of the log began writing is in round {@code n + 1} or an earlier one (round
 * {@code n} may have taken its records just before the write was appended: that is the "one
 * sync"), so it survives any crash after round {@code n + 1} completed. ASYNC's own part, that a
 * round comes without any writer asking (one interval), is tested as liveness: with the writers
 * idle, the log's durable position reaches its end by itself, and a power cut after that loses
 * nothing. Besides, every write below the log's durable position at the cut must survive.
 *
 * <p>Never torn: three writers each own their keys and run puts, removes, versioned puts and
 * batches over two maps; after a crash each writer's keys must be exactly as some prefix of its
 * calls left them (the log is replayed up to its first damaged record, and a writer's records
 * are in the order of its calls), a prefix that holds every call the rules above make durable.
 * The store must verify. Chains of points, as in {@link LogModeCrashTest}: each recovery is
 * checked on a copy, and the next point reopens the original, which must hold exactly the same.
 */
class AsyncDurabilityTest {
    private static final long LOG = LoggedOpen.MIN_LOG;
    private static final int WRITERS = 3;
    private static final int OPS = 200;
    private static final int KEYS = 60;
    private static final String[] MAPS = {"a", "x", "y"};

    static Htod.Builder builder(BlockDevice dev) {
        Htod.Builder b = Htod.builder(dev).grain(64).logSize(LOG).bufferSize(64 << 10).durability(Durability.ASYNC)
                .syncInterval(Duration.ofMillis(20)).loadFactor(0.25).cacheSize(64 << 10);
        return LayerAccess.doublingMinBatch(LayerAccess.installBatch(b, 48), 8);
    }

    @Test
    void asyncLosesOnlyATailWithinItsWindow() {
        int chains = 12 * LogStores.scale();
        int points = 20;
        int[] tally = new int[5]; // cuts, idle crashes, clean closes, calls required durable, calls lost
        for (int c = 0; c < chains; c++) {
            long seed = 0xA5C0_0000L + c;
            Chain chain = new Chain(seed, tally);
            try {
                chain.run(points);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ", point " + chain.point + " (" + chain.what + "): " + e, e);
            }
        }
        String report = tally[0] + " power cuts, " + tally[1] + " crashes once the background sync had caught up, "
                + tally[2] + " clean closes; " + tally[3] + " acknowledged calls had to survive, " + tally[4]
                + " were lost within the window";
        System.out.println("AsyncDurabilityTest: " + chains + " chains of " + points + " points: " + report);
        assertTrue(tally[0] >= 150 * LogStores.scale(), report);
        assertTrue(tally[1] >= 20 * LogStores.scale(), report);
        assertTrue(tally[3] > 0 && tally[4] > 0, "the checks must bite both ways: " + report);
    }

    private static final class Chain {
        final SplittableRandom r;
        final int[] tally;
        final MemoryDevice disk = new MemoryDevice();
        Map<String, Map<String, String>> base = LogModeCrashTest.emptyContent(MAPS);
        int point;
        String what = "";

        Chain(long seed, int[] tally) {
            this.r = new SplittableRandom(seed);
            this.tally = tally;
        }

        void run(int points) {
            for (point = 0; point < points; point++) {
                point();
            }
        }

        void point() {
            what = "opening";
            PowerCutTracer dev = new PowerCutTracer(disk.reopen(), LOG);
            HtodStore s = builder(dev).open();
            Map<String, Map<String, String>> found = LogStores.content(s);
            if (point > 0 && !found.equals(base)) {
                throw new AssertionError("reopened, the store holds\n  " + LogModeCrashTest.diff(base, found));
            }
            WriteLayer layer = LogStores.layer(s);
            Map<String, HtodMap<String, String>> maps = new HashMap<>();
            for (String m : MAPS) {
                maps.put(m, s.map(m, Codec.string(), Codec.string()));
            }
            int mode = r.nextInt(6); // 0: crash once idle and synced, 1: clean close, else a power cut
            if (mode >= 2) {
                dev.crash().armPowerCut(1 + r.nextInt(500), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
            }
            List<Writer> writers = new ArrayList<>();
            for (int t = 0; t < WRITERS; t++) {
                writers.add(new Writer(t, r.nextLong(), s, layer, dev, maps, base));
            }
            what = "writing";
            LogModeCrashTest.runAll(writers);
            if (mode == 1 && dev.phase() == null) {
                what = "closing";
                s.close();
                tally[2]++;
                Map<String, Map<String, String>> expected = LogModeCrashTest.emptyContent(MAPS);
                for (Writer w : writers) {
                    w.expectAll(expected);
                }
                base = expected;
                return;
            }
            boolean idle = false;
            if (dev.phase() == null) {
                // The writers are done and nothing asks for a sync: the background sync alone
                // must make every acknowledged call durable.
                what = "waiting for the background sync";
                long end = layer.log.end();
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (layer.log.durable() < end && dev.phase() == null) {
                    assertTrue(System.nanoTime() < deadline, "the background sync never made the log durable up to "
                            + end + ": durable " + layer.log.durable());
                    sleep();
                }
                idle = dev.phase() == null;
            }
            long durable = layer.log.durable();
            long completed = dev.roundsCompleted();
            what = dev.phase() == null ? "crash once idle" : "power cut in " + dev.phase();
            dev.crash().crash(r.nextLong());
            LogStores.closeQuietly(s);
            if (idle) {
                tally[1]++;
            } else {
                tally[0]++;
            }
            MemoryDevice copy = LogStores.copy(disk);
            try (HtodStore ref = builder(copy).open()) {
                found = LogStores.content(ref);
                LogStores.verify(ref);
            }
            Map<String, Map<String, String>> next = LogModeCrashTest.emptyContent(MAPS);
            for (Writer w : writers) {
                int[] counts = w.check(found, completed, durable, idle);
                tally[3] += counts[0];
                tally[4] += counts[1];
                w.keep(found, next);
            }
            assertEquals(next, found, "only the writers' keys");
            base = found;
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * A call of a writer: what it does to the writer's keys ("map/key" to value@version, null:
     * absent), and where the log stood when it returned: the rounds begun, and the log's end (at
     * or past the end of the call's record; unknown, the largest value, if a failed write of the
     * log took the end back meanwhile).
     */
    private static final class Call {
        final Map<String, String> effects;
        long roundsStarted = -1;
        long logEnd = -1;

        Call(Map<String, String> effects) {
            this.effects = effects;
        }

        boolean returned() {
            return roundsStarted >= 0;
        }
    }

    private static final class Writer implements Runnable {
        final int t;
        final SplittableRandom r;
        final HtodStore store;
        final WriteLayer layer;
        final PowerCutTracer dev;
        final Map<String, HtodMap<String, String>> maps;
        /** The writer's keys before its first call: "map/key" to value@version. */
        final Map<String, String> start = new HashMap<>();
        /** As its calls so far left them. */
        final Map<String, String> now;
        final List<Call> calls = new ArrayList<>();

        Writer(int t, long seed, HtodStore store, WriteLayer layer, PowerCutTracer dev,
                Map<String, HtodMap<String, String>> maps, Map<String, Map<String, String>> base) {
            this.t = t;
            this.r = new SplittableRandom(seed);
            this.store = store;
            this.layer = layer;
            this.dev = dev;
            this.maps = maps;
            for (String m : MAPS) {
                base.get(m).forEach((k, v) -> {
                    if (mine(k)) {
                        start.put(m + "/" + k, v);
                    }
                });
            }
            this.now = new HashMap<>(start);
        }

        boolean mine(String key) {
            return key.startsWith("k" + t + "-");
        }

        @Override
        public void run() {
            try {
                for (int op = 0; op < OPS; op++) {
                    step(op);
                }
            } catch (HtodException e) {
                if (!LogStores.causedByPowerCut(e)) {
                    throw e;
                }
            }
        }

        private String key() {
            return "k" + t + "-" + r.nextInt(KEYS);
        }

        private long version(String mk) {
            String cur = now.get(mk);
            return cur == null ? 0 : LogModeCrashTest.versionOf(cur);
        }

        private void step(int op) {
            String v = "t" + t + "-" + op + "p".repeat(r.nextInt(4) == 0 ? 200 : r.nextInt(30));
            Map<String, String> effects = new HashMap<>();
            Call call = new Call(effects);
            int kind = r.nextInt(10);
            Runnable action;
            if (kind < 4) {
                String k = key();
                effects.put("a/" + k, v + "@" + (version("a/" + k) + 1));
                action = () -> maps.get("a").put(k, v);
            } else if (kind < 5) {
                String k = key();
                effects.put("a/" + k, null);
                action = () -> maps.get("a").remove(k);
            } else if (kind < 7) {
                String k = key();
                long cur = version("a/" + k);
                boolean stale = cur > 1 && r.nextInt(4) == 0;
                long ver = stale ? 1 + r.nextInt((int) cur) : cur + 1 + r.nextInt(3);
                if (!stale) {
                    effects.put("a/" + k, v + "@" + ver);
                }
                action = () -> {
                    if (maps.get("a").putVersioned(k, v, ver) == stale) {
                        throw new AssertionError("putVersioned of " + k + " at version " + ver + " over version " + cur
                                + " returned " + stale);
                    }
                };
            } else {
                Map<String, String> after = new HashMap<>();
                WriteBatch b = store.batch();
                int n = 1 + r.nextInt(3);
                for (int i = 0; i < n; i++) {
                    String k = key();
                    for (String m : new String[] {"x", "y"}) {
                        String mk = m + "/" + k;
                        if (r.nextInt(10) < 7) {
                            String cur = after.containsKey(mk) ? after.get(mk) : now.get(mk);
                            after.put(mk, v + i + "@" + (cur == null ? 1 : LogModeCrashTest.versionOf(cur) + 1));
                            b.put(maps.get(m), k, v + i);
                        } else {
                            after.put(mk, null);
                            b.remove(maps.get(m), k);
                        }
                    }
                }
                effects.putAll(after);
                action = b::commit;
            }
            calls.add(call);
            long epoch = layer.log.epoch();
            action.run();
            long end = layer.log.end();
            // A failed log write drops its records and takes the log's end back: an end read
            // after one (the epoch changed) says nothing of where this call's record ended.
            call.logEnd = layer.log.epoch() == epoch ? end : Long.MAX_VALUE;
            call.roundsStarted = dev.roundsStarted();
            effects.forEach((mk, after) -> {
                if (after == null) {
                    now.remove(mk);
                } else {
                    now.put(mk, after);
                }
            });
        }

        /** Every call, as after a clean close. */
        void expectAll(Map<String, Map<String, String>> into) {
            now.forEach((mk, v) -> {
                String[] p = mk.split("/", 2);
                into.get(p[0]).put(p[1], v);
            });
        }

        /** This writer's keys of {@code found}, into {@code into}. */
        void keep(Map<String, Map<String, String>> found, Map<String, Map<String, String>> into) {
            for (String m : MAPS) {
                found.get(m).forEach((k, v) -> {
                    if (mine(k)) {
                        into.get(m).put(k, v);
                    }
                });
            }
        }

        /**
         * This writer's keys must be as a prefix of its calls left them, one that holds every call
         * the window makes durable. Returns the calls that had to survive and those lost.
         */
        int[] check(Map<String, Map<String, String>> found, long roundsCompleted, long durable, boolean all) {
            Map<String, String> target = new HashMap<>();
            for (String m : MAPS) {
                found.get(m).forEach((k, v) -> {
                    if (mine(k)) {
                        target.put(m + "/" + k, v);
                    }
                });
            }
            int required = 0;
            for (int i = 0; i < calls.size(); i++) {
                Call c = calls.get(i);
                if (c.returned() && (all || c.roundsStarted + 2 <= roundsCompleted || c.logEnd <= durable)) {
                    required = i + 1;
                }
            }
            Map<String, String> state = new HashMap<>(start);
            Set<String> keys = new HashSet<>(state.keySet());
            keys.addAll(target.keySet());
            int mismatched = 0;
            for (String k : keys) {
                if (!Objects.equals(state.get(k), target.get(k))) {
                    mismatched++;
                }
            }
            List<Integer> prefixes = new ArrayList<>();
            if (mismatched == 0) {
                prefixes.add(0);
            }
            for (int i = 0; i < calls.size(); i++) {
                for (Map.Entry<String, String> e : calls.get(i).effects.entrySet()) {
                    String k = e.getKey();
                    boolean was = Objects.equals(state.get(k), target.get(k));
                    if (e.getValue() == null) {
                        state.remove(k);
                    } else {
                        state.put(k, e.getValue());
                    }
                    boolean is = Objects.equals(state.get(k), target.get(k));
                    mismatched += (was ? 0 : -1) + (is ? 0 : 1);
                }
                if (mismatched == 0) {
                    prefixes.add(i + 1);
                }
            }
            if (prefixes.isEmpty()) {
                throw new AssertionError("writer " + t + "'s keys are as no prefix of its " + calls.size()
                        + " calls left them (a torn state): " + new TreeMap<>(target));
            }
            int longest = prefixes.get(prefixes.size() - 1);
            if (longest < required) {
                Call c = calls.get(required - 1);
                throw new AssertionError("writer " + t + " lost call " + (required - 1) + " " + c.effects + ", which returned"
                        + " before round " + (c.roundsStarted + 1) + " of the log began (" + roundsCompleted
                        + " rounds completed) and ended at log position " + c.logEnd + " (durable " + durable
                        + "); its keys are as after its first " + prefixes + " calls");
            }
            assertFalse(longest > calls.size());
            int returned = 0;
            for (Call c : calls) {
                if (c.returned()) {
                    returned++;
                }
            }
            return new int[] {required, Math.max(0, returned - longest)};
        }
    }
}
