package org.htod.infinispan;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.infinispan.commons.test.CommonsTestingUtil;
import org.infinispan.commons.time.ControlledTimeService;
import org.infinispan.commons.util.IntSet;
import org.infinispan.commons.util.IntSets;
import org.infinispan.commons.util.Util;
import org.infinispan.configuration.cache.Configuration;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.distribution.ch.KeyPartitioner;
import org.infinispan.marshall.TestObjectStreamMarshaller;
import org.infinispan.marshall.persistence.impl.MarshalledEntryUtil;
import org.infinispan.metadata.EmbeddedMetadata;
import org.infinispan.persistence.spi.InitializationContext;
import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.persistence.spi.NonBlockingStore;
import org.infinispan.persistence.spi.PersistenceException;
import org.infinispan.persistence.support.SingleSegmentPublisher;
import org.infinispan.test.AbstractInfinispanTest;
import org.infinispan.util.PersistenceMockUtil;
import org.mockito.Mockito;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

import io.reactivex.rxjava3.core.Flowable;

/**
 * Passivation and activation traffic from several threads against a model, on a store whose
 * device fails writes and syncs on purpose and then loses power (htod's {@link FaultyDevice} over
 * its {@link CrashDevice}), reopened afterwards as a restarted node reopens it. Each round either
 * arms a power cut at a random write or sync, or fails random writes and syncs (once or from then
 * on) while the threads go on, and crashes at the end.
 *
 * <p>Each thread owns some segments and their keys, as a node's eviction and activation of one key
 * are ordered by Infinispan: it passivates (a write, with a lifespan or none), activates (a load
 * and a delete), loads, writes and removes in a {@code batch}, and removes one of its segments.
 * Another thread advances the clock and purges expired entries meanwhile. What the model requires:
 *
 * <ul>
 *   <li>a stage that completed normally was durable, at the store's default durability ({@code
 *       SYNC}): after the crash the key holds what it acknowledged last, or what a failed or
 *       unfinished operation on it since may have left; a delete or a segment removal acknowledged
 *       stays done, and a purge removes nothing live;
 *   <li>an entry found has the value, creation time and expiry of one write of it, whole;
 *   <li>in log mode a batch that failed is, after the crash, all there or not at all;
 *   <li>every failure is a {@link PersistenceException} naming the store's file, caused by htod's
 *       exception;
 *   <li>the store opened again iterates what it loads, counts it (once purged) in both sizes, and
 *       takes the next run's traffic: a round is three runs, each ended by a crash.
 * </ul>
 *
 * A power cut ends the node: the threads stop there, so that what was in flight is all the crash
 * may keep or drop. Run 2 of a seed that fails in its check failed at the restart after run 1.
 *
 * The seed of a failing round is in the message; {@code -Dhtod.faults.seed=<seed>} runs that round
 * alone, and {@code -Dhtod.faults.rounds=<n>} runs n rounds of each variant instead of {@value #ROUNDS}.
 */
@Test(groups = "unit", testName = "persistence.htod.StoreFaultsRandomTest")
public class StoreFaultsRandomTest extends AbstractInfinispanTest {
    private static final int SEGMENTS = 12;
    private static final int KEYS = 36;
    private static final int THREADS = 3;
    private static final int STEPS = 60;
    private static final int ROUNDS = 6;
    /** Crashes in a round, each followed by a restart on the file. */
    private static final int CYCLES = 3;
    private static final String ABSENT = "(absent)";

    private TestObjectStreamMarshaller marshaller;
    /** The clock of the round under way: set back to its start at each round, so that a seed replays alone. */
    private final RoundClock time = new RoundClock();
    /**
     * One context per variant, for every round and restart of it. A context's mocks are never
     * collected: Mockito keeps each inline mock's stubbings in a map whose key, the mock, is weak,
     * but the stubbings reach the mock again (the mock cache manager's component registry holds
     * the manager), so every start's context stayed (some 40 KB), and 1,600 rounds filled the
     * test JVM's heap. A mock reused so records every call made on it, as Mockito does for a
     * later verify: {@link #reused} forgets them at each round.
     */
    private final Map<String, InitializationContext> contexts = new HashMap<>();

    /** A controlled clock that goes back to where it started. */
    private static final class RoundClock extends ControlledTimeService {
        private final long start = currentMillis;

        void restart() {
            currentMillis = start;
        }
    }

    /** Key {@code k<i>} is in segment {@code i % SEGMENTS}; segment {@code s} belongs to thread {@code s % THREADS}. */
    private static final KeyPartitioner PARTITIONER = key -> Integer.parseInt(((String) key).substring(1)) % SEGMENTS;

    @BeforeClass(alwaysRun = true)
    protected void setUpMarshaller() {
        marshaller = new TestObjectStreamMarshaller();
    }

    @AfterClass(alwaysRun = true)
    protected void tearDownMarshaller() {
        if (marshaller != null) {
            marshaller.stop();
        }
        Util.recursiveFileRemove(CommonsTestingUtil.tmpDirectory(getClass()));
    }

    public void testSegmentedLogMode() {
        rounds(true, false, 0x5E61_0000L);
    }

    public void testNonSegmentedLogMode() {
        rounds(false, false, 0x0A11_0000L);
    }

    public void testSegmentedDirectMode() {
        rounds(true, true, 0xD1EC_0000L);
    }

    /** A non-segmented store removes a segment's keys one by one, found by a scan: in direct mode without WriteBatch. */
    public void testNonSegmentedDirectMode() {
        rounds(false, true, 0x0D1E_0000L);
    }

    private void rounds(boolean segmented, boolean direct, long base) {
        String only = System.getProperty("htod.faults.seed");
        if (only != null) {
            long seed = Long.decode(only);
            if ((seed & ~0xFFFFL) == base) {
                round(segmented, direct, seed);
            }
            return;
        }
        int rounds = Integer.getInteger("htod.faults.rounds", ROUNDS);
        for (int r = 0; r < rounds; r++) {
            round(segmented, direct, base + r);
        }
    }

    // ------------------------------------------------------------------ the model

    /** One write of a key: its value (unique in a round) and what the store must give back with it. */
    private record Written(String value, long created, long expiry) {}

    /** What a key may hold: its last acknowledged write, and while unsettled what failed operations may have left. */
    private static final class KeyModel {
        /** The last acknowledged write, or null for absent. */
        Written acked;
        /** Null when settled; else every state the key may be in, null standing for absent. */
        Set<Written> maybe;
        /** The batch that changed the key last, or null if another operation did since. */
        Batch lastBatch;

        void begin(Written w) {
            lastBatch = null;
            if (maybe == null) {
                maybe = new LinkedHashSet<>();
                maybe.add(acked);
            }
            maybe.add(w);
        }

        void ack(Written w) {
            acked = w;
            maybe = null;
        }

        Set<Written> possible() {
            Set<Written> s = new LinkedHashSet<>();
            if (maybe == null) {
                s.add(acked);
            } else {
                s.addAll(maybe);
            }
            return s;
        }

        boolean settled() {
            return maybe == null;
        }
    }

    /** A batch that was not acknowledged, in log mode one WriteBatch: after the crash all of it or none. */
    private record Batch(Map<String, Written> effects) {}

    private static boolean dead(Written w, long now) {
        return w == null || (w.expiry > 0 && w.expiry <= now);
    }

    /**
     * Whether {@code found} (null: absent) is a state of {@code possible} read between {@code t0}
     * and {@code t1}: a live write as it was, or absent where one was absent or dead by then.
     */
    private static String disallowed(Set<Written> possible, MarshallableEntry<Object, Object> found, long t0, long t1) {
        if (found == null) {
            for (Written w : possible) {
                if (dead(w, t1)) {
                    return null;
                }
            }
            return "absent";
        }
        Object value = found.getValue();
        for (Written w : possible) {
            if (w != null && w.value.equals(value) && !dead(w, t0)) {
                if (found.created() != w.created || found.expiryTime() != w.expiry) {
                    return value + " with created " + found.created() + " and expiry " + found.expiryTime()
                            + ", written with created " + w.created + " and expiry " + w.expiry;
                }
                return null;
            }
        }
        return String.valueOf(value) + " (expiry " + found.expiryTime() + ")";
    }

    // ------------------------------------------------------------------ one round

    private final class Round {
        final long seed;
        final boolean segmented;
        final boolean direct;
        final Map<String, KeyModel> model = new HashMap<>();
        /** Every write of the round by its value, which is unique. */
        final Map<String, Written> writes = new ConcurrentHashMap<>();
        final List<String> problems = new CopyOnWriteArrayList<>();
        final AtomicBoolean running = new AtomicBoolean(true);
        final Map<String, Integer> failures = new ConcurrentHashMap<>();
        final Map<String, String> messages = new ConcurrentHashMap<>();
        /** The batches that failed since the last restart. */
        final List<Batch> failedBatches = new CopyOnWriteArrayList<>();
        /** What is on the platter: the file of the node, across its crashes. */
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash;
        FaultyDevice faulty;
        String file;
        int acked;
        int cycle;

        Round(long seed, boolean segmented, boolean direct) {
            this.seed = seed;
            this.segmented = segmented;
            this.direct = direct;
            for (int i = 0; i < KEYS; i++) {
                model.put("k" + i, new KeyModel());
            }
        }

        String where() {
            return "seed 0x" + Long.toHexString(seed) + " (segmented " + segmented + ", direct mode " + direct + "), "
                    + (cycle < CYCLES ? "run " + (cycle + 1) : "restart " + cycle) + " of " + CYCLES;
        }
    }

    /**
     * One round: {@link #CYCLES} times the node starts on its file (checking it against the model
     * after the first), runs the threads while the device fails or loses power, and crashes.
     */
    private void round(boolean segmented, boolean direct, long seed) {
        try {
            runRound(segmented, direct, seed);
        } catch (RuntimeException e) {
            throw new AssertionError("seed 0x" + Long.toHexString(seed) + " (segmented " + segmented + ", direct mode "
                    + direct + "): " + e, e);
        }
    }

    private void runRound(boolean segmented, boolean direct, long seed) {
        // Scrambled: java.util.Random's first draws from consecutive seeds are alike.
        Random random = new Random(seed * 0x9E3779B97F4A7C15L);
        Round r = new Round(seed, segmented, direct);
        time.restart();
        InitializationContext context = reused(contexts.computeIfAbsent(segmented + "/" + direct,
                v -> context(config(segmented, direct))));
        for (r.cycle = 0; r.cycle < CYCLES; r.cycle++) {
            r.crash = new CrashDevice(r.cycle == 0 ? r.disk : (r.disk = r.disk.reopen()));
            r.faulty = new FaultyDevice(r.crash);
            HtodNonBlockingStore<Object, Object> store = new HtodNonBlockingStore<>(path -> {
                r.file = path.toString();
                return Htod.builder(r.faulty);
            });
            join(store.start(context));
            if (r.cycle > 0) {
                try {
                    check(r, store);
                } catch (RuntimeException | Error e) {
                    join(store.stop());
                    throw e;
                }
            }
            String what = run(r, store, random);
            r.faulty.heal();
            CrashDevice.CrashReport lost = r.crash.crash(random.nextLong());
            try {
                join(store.stop());
            } catch (RuntimeException expected) {
                // the power is gone: the close cannot write
            }
            if (!r.problems.isEmpty()) {
                throw new AssertionError(r.where() + ": " + r.problems.size() + " problems while running, first "
                        + r.problems.subList(0, Math.min(5, r.problems.size())));
            }
            System.out.printf("%s: %s, %d acknowledged, failures %s, faults %d, crash %s%n", r.where(), what, r.acked,
                    r.failures, r.faulty.faultsRaised(), lost);
        }
        HtodNonBlockingStore<Object, Object> again = new HtodNonBlockingStore<>(path -> Htod.builder(r.disk.reopen()));
        join(again.start(context));
        try {
            check(r, again);
        } finally {
            join(again.stop());
        }
    }

    /**
     * Runs the threads on {@code store}: half the time the power fails at a random write or sync,
     * without faults before; else writes and syncs fail as they go, and half of those times the
     * power fails later on. Says which.
     */
    private String run(Round r, HtodNonBlockingStore<Object, Object> store, Random random) {
        r.running.set(true);
        boolean faults = random.nextBoolean();
        if (!faults || random.nextBoolean()) {
            r.crash.armPowerCut((faults ? 100 : 1) + random.nextInt(400), CrashDevice.Counting.WRITES_AND_SYNCS,
                    random.nextBoolean() ? CrashDevice.CutWrite.IN_FLIGHT : CrashDevice.CutWrite.LOST);
        }
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int owner = t;
            long threadSeed = random.nextLong();
            threads.add(new Thread(() -> worker(r, store, owner, new Random(threadSeed)), "htod-faults-worker-" + t));
        }
        long purgeSeed = random.nextLong();
        Thread purger = new Thread(() -> purger(r, store, new Random(purgeSeed), faults), "htod-faults-purger");
        threads.forEach(Thread::start);
        purger.start();
        for (Thread t : threads) {
            joinThread(t);
        }
        r.running.set(false);
        joinThread(purger);
        return (faults ? "faults" : "no faults") + (r.crash.powerCut() ? ", power cut" : "");
    }

    /**
     * Checks the store started after a crash against the model: each key holds a state it may hold,
     * whole, and iteration agrees with the loads; once the expired entries are purged, the counts
     * agree too. Then settles each key to what it holds.
     */
    private void check(Round r, HtodNonBlockingStore<Object, Object> store) {
        long now = time.wallClockTime();
        List<String> wrong = new ArrayList<>();
        Map<Object, Object> loaded = new HashMap<>();
        Map<String, Written> found = new HashMap<>();
        for (int i = 0; i < KEYS; i++) {
            String k = "k" + i;
            MarshallableEntry<Object, Object> e = join(store.load(PARTITIONER.getSegment(k), k));
            KeyModel m = r.model.get(k);
            String bad = disallowed(m.possible(), e, now, now);
            if (bad != null) {
                wrong.add(k + " holds " + bad + ", may hold " + describe(m.possible(), now));
            }
            if (e != null) {
                loaded.put(k, e.getValue());
                found.put(k, r.writes.get((String) e.getValue()));
            }
        }
        Map<Object, Object> iterated = new HashMap<>();
        IntSet all = IntSets.immutableRangeSet(SEGMENTS);
        Flowable.fromPublisher(store.publishEntries(all, null, true))
                .blockingForEach(me -> iterated.put(me.getKey(), me.getValue()));
        Flowable.fromPublisher(store.purgeExpired()).blockingSubscribe();
        if (!r.direct) {
            wrong.addAll(tornBatches(r, found, now));
        }
        r.failedBatches.clear();
        long size = join(store.size(all));
        long approximate = join(store.approximateSize(all));
        if (!wrong.isEmpty() || !iterated.equals(loaded) || size != loaded.size() || approximate != size) {
            throw new AssertionError(r.where() + ", " + r.acked + " operations acknowledged, failures " + r.failures
                    + ": after the restart " + wrong + (iterated.equals(loaded) ? ""
                            : "; iteration found " + iterated + ", loads " + loaded)
                    + "; " + loaded.size() + " loaded, size " + size + ", approximate size after a purge " + approximate);
        }
        for (int i = 0; i < KEYS; i++) {
            String k = "k" + i;
            r.model.get(k).ack(found.get(k));
        }
    }

    private Configuration config(boolean segmented, boolean direct) {
        ConfigurationBuilder b = new ConfigurationBuilder();
        b.clustering().hash().numSegments(SEGMENTS);
        return b.persistence()
                .addStore(HtodStoreConfigurationBuilder.class)
                .location("faults")
                .segmented(segmented)
                .directMode(direct)
                .durability(Durability.SYNC)
                .logSize(1 << 20)
                .bufferSize(1 << 16)
                .cacheSize(0)
                .build();
    }

    /** {@code ctx}, its mocks' record of calls cleared: a round's starts record a few calls each. */
    private static InitializationContext reused(InitializationContext ctx) {
        Object cache = ctx.getCache();
        Mockito.clearInvocations(cache, ctx.getCache().getCacheManager());
        return ctx;
    }

    private InitializationContext context(Configuration config) {
        return new PersistenceMockUtil.InvocationContextBuilder(getClass(), config, marshaller)
                .setTimeService(time)
                .setKeyPartitioner(PARTITIONER)
                .build();
    }

    /**
     * Log mode: the failed batches, each of whose keys no later operation touched, that the crash
     * left in part: some key shows the batch's change and another one its state before.
     */
    private static List<String> tornBatches(Round r, Map<String, Written> found, long now) {
        List<String> torn = new ArrayList<>();
        for (Batch b : r.failedBatches) {
            if (!b.effects.keySet().stream().allMatch(k -> r.model.get(k).lastBatch == b)) {
                continue;
            }
            List<String> applied = new ArrayList<>();
            List<String> not = new ArrayList<>();
            b.effects.forEach((k, change) -> {
                Written f = found.get(k);
                if (f != null) {
                    (f.equals(change) ? applied : not).add(k);
                } else if (change != null && !dead(change, now)) {
                    not.add(k); // absent where the batch wrote a live entry
                }
            });
            if (!applied.isEmpty() && !not.isEmpty()) {
                torn.add("a failed batch " + b.effects.keySet() + " was applied to " + applied + " and not to " + not);
            }
        }
        return torn;
    }

    private static String describe(Set<Written> possible, long now) {
        List<String> out = new ArrayList<>();
        for (Written w : possible) {
            out.add(w == null ? ABSENT : w.value + (dead(w, now) ? " (expired)" : "") + " created " + w.created
                    + " expiry " + w.expiry);
        }
        return out.toString();
    }

    // ------------------------------------------------------------------ the threads

    private void worker(Round r, HtodNonBlockingStore<Object, Object> store, int owner, Random random) {
        List<Integer> segments = new ArrayList<>();
        for (int s = owner; s < SEGMENTS; s += THREADS) {
            segments.add(s);
        }
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            if (segments.contains(i % SEGMENTS)) {
                keys.add("k" + i);
            }
        }
        int n = 0;
        try {
            // The power cut ends the node: what was in flight then is what the crash may keep.
            for (int step = 0; step < STEPS && !r.crash.powerCut(); step++) {
                int op = random.nextInt(100);
                String k = keys.get(random.nextInt(keys.size()));
                if (op < 35) {
                    passivate(r, store, k, written(r, random, owner, n++));
                } else if (op < 60) {
                    activate(r, store, k);
                } else if (op < 75) {
                    load(r, store, k);
                } else if (op < 92) {
                    batch(r, store, keys, random, owner, n);
                    n += 8;
                } else {
                    removeSegment(r, store, segments.get(random.nextInt(segments.size())), keys);
                }
            }
        } catch (RuntimeException | Error e) {
            r.problems.add(owner + ": " + e);
            throw e;
        }
    }

    private Written written(Round r, Random random, int owner, int n) {
        long now = time.wallClockTime();
        long expiry;
        switch (random.nextInt(3)) {
            case 0 -> expiry = -1;
            case 1 -> expiry = now + 5 + random.nextInt(20); // expires during the round, by the purger's clock
            default -> expiry = now + 3_600_000;
        }
        Written w = new Written("v" + r.cycle + "-" + owner + "-" + n + "-" + "x".repeat(random.nextInt(200)), now, expiry);
        r.writes.put(w.value, w);
        return w;
    }

    private MarshallableEntry<Object, Object> entry(String k, Written w) {
        long lifespan = w.expiry < 0 ? -1 : w.expiry - w.created;
        return MarshalledEntryUtil.create(k, w.value, new EmbeddedMetadata.Builder().lifespan(lifespan).build(),
                w.created, w.created, marshaller);
    }

    /** Eviction: the entry goes to the store. */
    private void passivate(Round r, HtodNonBlockingStore<Object, Object> store, String k, Written w) {
        KeyModel m = r.model.get(k);
        MarshallableEntry<Object, Object> e = entry(k, w);
        if (e.expiryTime() != w.expiry) {
            throw new AssertionError("the test's entry of " + k + " dies at " + e.expiryTime() + ", not " + w.expiry);
        }
        m.begin(w);
        if (done(r, "write", () -> store.write(PARTITIONER.getSegment(k), e)) != null) {
            m.ack(w);
        }
    }

    /** Activation: the entry is loaded into memory and deleted from the store. */
    private void activate(Round r, HtodNonBlockingStore<Object, Object> store, String k) {
        load(r, store, k);
        KeyModel m = r.model.get(k);
        boolean settled = m.settled();
        Written before = m.acked;
        m.begin(null);
        Boolean existed = done(r, "delete", () -> store.delete(PARTITIONER.getSegment(k), k));
        long t1 = time.wallClockTime();
        if (existed != null) {
            m.ack(null);
            // An entry dead by the end of the delete may have been purged before it.
            if (settled && existed != (before != null) && !(before != null && dead(before, t1))) {
                r.problems.add("delete of " + k + " returned " + existed + " where it held " + before);
            }
        }
    }

    private void load(Round r, HtodNonBlockingStore<Object, Object> store, String k) {
        KeyModel m = r.model.get(k);
        long t0 = time.wallClockTime();
        Object[] found = new Object[1];
        Boolean ok = done(r, "load", () -> store.load(PARTITIONER.getSegment(k), k).thenApply(e -> {
            found[0] = e;
            return Boolean.TRUE;
        }));
        long t1 = time.wallClockTime();
        if (ok != null) {
            @SuppressWarnings("unchecked")
            MarshallableEntry<Object, Object> e = (MarshallableEntry<Object, Object>) found[0];
            String bad = disallowed(m.possible(), e, t0, t1);
            if (bad != null) {
                r.problems.add("a load of " + k + " between " + t0 + " and " + t1 + " found " + bad + ", may hold "
                        + describe(m.possible(), t1));
            }
        }
    }

    /** A putAll, a transaction's commit or a write-behind flush: writes and removes of distinct keys. */
    private void batch(Round r, HtodNonBlockingStore<Object, Object> store, List<String> keys, Random random, int owner,
            int n) {
        List<String> shuffled = new ArrayList<>(keys);
        java.util.Collections.shuffle(shuffled, random);
        int writes = 1 + random.nextInt(5);
        int removes = random.nextInt(4);
        Map<String, Written> w = new HashMap<>();
        List<MarshallableEntry<Object, Object>> entries = new ArrayList<>();
        for (int i = 0; i < writes; i++) {
            String k = shuffled.get(i);
            Written x = written(r, random, owner, n + i);
            w.put(k, x);
            entries.add(entry(k, x));
        }
        List<String> removed = shuffled.subList(writes, writes + removes);
        w.forEach((k, x) -> r.model.get(k).begin(x));
        removed.forEach(k -> r.model.get(k).begin(null));
        Map<String, Written> effects = new HashMap<>(w);
        removed.forEach(k -> effects.put(k, null));
        Batch record = new Batch(effects);
        effects.keySet().forEach(k -> r.model.get(k).lastBatch = record);
        Flowable<NonBlockingStore.SegmentedPublisher<Object>> removePublisher = Flowable.fromIterable(removed)
                .map(k -> SingleSegmentPublisher.singleSegment(PARTITIONER.getSegment(k), Flowable.just((Object) k)));
        Flowable<NonBlockingStore.SegmentedPublisher<MarshallableEntry<Object, Object>>> writePublisher =
                Flowable.fromIterable(entries).map(e -> SingleSegmentPublisher.singleSegment(
                        PARTITIONER.getSegment(e.getKey()), Flowable.just(e)));
        if (done(r, "batch", () -> store.batch(writes + removes, removePublisher, writePublisher)) != null) {
            w.forEach((k, x) -> r.model.get(k).ack(x));
            removed.forEach(k -> r.model.get(k).ack(null));
        } else {
            r.failedBatches.add(record);
        }
    }

    /** A node losing a segment in a rebalance. */
    private void removeSegment(Round r, HtodNonBlockingStore<Object, Object> store, int segment, List<String> keys) {
        List<String> in = new ArrayList<>();
        for (String k : keys) {
            if (PARTITIONER.getSegment(k) == segment) {
                in.add(k);
            }
        }
        in.forEach(k -> r.model.get(k).begin(null));
        IntSet s = IntSets.immutableSet(segment);
        if (done(r, "removeSegments", () -> store.removeSegments(s)) != null) {
            in.forEach(k -> r.model.get(k).ack(null));
        }
    }

    /**
     * Advances the clock and purges, until the workers are done; with {@code faults}, fails random
     * writes (whole, or after part of the write landed) and syncs of the device as it goes, once or
     * until healed.
     */
    private void purger(Round r, HtodNonBlockingStore<Object, Object> store, Random random, boolean faults) {
        try {
            while (r.running.get()) {
                time.advance(1 + random.nextInt(8));
                long now = time.wallClockTime();
                if (faults && random.nextInt(4) == 0) {
                    FaultyDevice.Fault f = random.nextBoolean() ? FaultyDevice.Fault.IO_ERROR : FaultyDevice.Fault.DISK_FULL;
                    boolean sticky = random.nextInt(4) == 0;
                    int kind = random.nextInt(5);
                    if (kind == 0) {
                        // Part of it lands, in whole sectors as a device lands it: a sector left part
                        // new, then a crash before the heal, leaves a log frame that fails its CRC
                        // where the durable records end, and the open is refused as damage.
                        r.faulty.failWriteAfter(1 + random.nextInt(20), 512 * (1 + random.nextInt(2)));
                    } else if (kind < 3) {
                        r.faulty.failWrite(1 + random.nextInt(20), f, sticky);
                    } else {
                        r.faulty.failSync(1 + random.nextInt(20), f, sticky);
                    }
                } else if (faults && random.nextInt(3) == 0) {
                    r.faulty.heal();
                }
                List<MarshallableEntry<Object, Object>> purged = new ArrayList<>();
                done(r, "purgeExpired", () -> Flowable.fromPublisher(store.purgeExpired()).doOnNext(purged::add)
                        .count().toCompletionStage());
                for (MarshallableEntry<Object, Object> e : purged) {
                    if (e.expiryTime() <= 0 || e.expiryTime() > now) {
                        r.problems.add("the purge at " + now + " removed " + e.getKey() + " = " + e.getValue()
                                + ", which dies at " + e.expiryTime());
                    }
                }
                Thread.sleep(random.nextInt(3));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            r.problems.add("purger: " + e);
        }
    }

    /**
     * The result of the stage {@code call} returns, or null if it failed, after checking that the
     * failure says what failed and where, with htod's exception as its cause.
     */
    private static <T> T done(Round r, String what, java.util.function.Supplier<CompletionStage<T>> call) {
        try {
            T t = call.get().toCompletableFuture().join();
            synchronized (r) {
                r.acked++;
            }
            return t;
        } catch (RuntimeException e) {
            Throwable c = e;
            while (c instanceof CompletionException && c.getCause() != null) {
                c = c.getCause();
            }
            r.messages.putIfAbsent(what + ": " + c.getClass().getSimpleName()
                    + (c.getCause() == null ? "" : "/" + c.getCause().getClass().getSimpleName()), String.valueOf(c.getMessage()));
            r.failures.merge(what + ": " + c.getClass().getSimpleName()
                    + (c.getCause() == null ? "" : "/" + c.getCause().getClass().getSimpleName()), 1, Integer::sum);
            if (!(c instanceof PersistenceException) || !(c.getCause() instanceof HtodException)
                    || c.getMessage() == null || !c.getMessage().contains(r.file)) {
                r.problems.add(what + " failed with " + c + " (cause " + c.getCause()
                        + "): not a PersistenceException naming " + r.file + " caused by htod's exception");
            }
            return null;
        }
    }

    private static <T> T join(CompletionStage<T> stage) {
        return stage.toCompletableFuture().join();
    }

    private static void joinThread(Thread t) {
        try {
            t.join(60_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        if (t.isAlive()) {
            throw new AssertionError(t.getName() + " still runs after a minute: " + java.util.Arrays.toString(
                    t.getStackTrace()));
        }
    }
}
