package org.htod.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.htod.Durability;
import org.infinispan.Cache;
import org.infinispan.commons.time.ControlledTimeService;
import org.infinispan.commons.time.TimeService;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.test.TestingUtil;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A real embedded cache with passivation and a small memory bound, so that most entries live in
 * the store and move between it and memory as they are evicted and read: random puts (with a
 * lifespan on half the keys), removes, gets, putAlls, expirations of the controlled clock and purges,
 * against a model map, with clean stops and restarts of the cache manager on the same files in
 * between. After each restart, and at each get, every entry the model holds alive must come back
 * with its value, and none that was removed or has expired. A clean stop passivates what is in
 * memory and closes the store, so at every durability, ASYNC and NONE included, it keeps
 * everything. The seed, the operation and what was done to the key are in the failure's message.
 *
 * <p>Half the keys are written with a lifespan, each value dying no earlier than the one before
 * it, and the others without. Infinispan (15 and later) leaves a passivated entry in the store
 * when the key is written again in memory, and removes it only on a remove: a value with a
 * lifespan that dies in memory before it is passivated again leaves the earlier value in the
 * store, which comes back after a restart. That is Infinispan's, whatever the store: the
 * SoftIndexFileStore gives back the same values as htod's store.
 */
class PassivationRestartRandomTest {
    private static final int KEYS = 120;
    private static final int IN_MEMORY = 16;
    private static final int OPERATIONS = 1_500;
    private static final int RESTARTS = 3;

    /** A value and when it dies, -1 never. */
    private record Live(String value, long expiry) {
        boolean alive(long now) {
            return expiry < 0 || now < expiry;
        }
    }

    @ParameterizedTest(name = "{0}, direct mode {1}, seed {2}")
    @CsvSource({"SYNC, false, 1", "ASYNC, false, 2", "NONE, false, 3", "SYNC, true, 4", "NONE, true, 5"})
    void passivatedEntriesSurviveRestarts(Durability durability, boolean direct, long seed, @TempDir Path dir) {
        Random random = new Random(seed * 0x9E3779B97F4A7C15L);
        ControlledTimeService time = new ControlledTimeService();
        Map<String, Live> model = new HashMap<>();
        Map<String, StringBuilder> history = new HashMap<>();
        int restartEvery = OPERATIONS / (RESTARTS + 1);
        DefaultCacheManager cm = start(dir, time, durability, direct);
        try {
            for (int op = 0; op < OPERATIONS; op++) {
                String where = "seed " + seed + " (" + durability + ", direct mode " + direct + "), operation " + op;
                if (op > 0 && op % restartEvery == 0) {
                    cm.stop();
                    cm = start(dir, time, durability, direct);
                    checkAll(cache(cm), model, history, time, where + ", after a restart");
                }
                step(cache(cm), model, history, time, random, op, where);
            }
            cm.stop();
            cm = start(dir, time, durability, direct);
            checkAll(cache(cm), model, history, time, "seed " + seed + " (" + durability + ", direct mode " + direct
                    + "), after the last restart");
        } finally {
            cm.stop();
        }
    }

    private static void step(Cache<String, String> cache, Map<String, Live> model, Map<String, StringBuilder> history,
            ControlledTimeService time, Random random, int op, String where) {
        int key = random.nextInt(KEYS);
        String k = "k" + key;
        int what = random.nextInt(100);
        long now = time.wallClockTime();
        if (what < 35) {
            String v = "v" + op + "-" + "x".repeat(random.nextInt(300));
            if (mortal(key)) {
                // Never before an earlier value's death: see the class comment.
                Live before = model.get(k);
                long expiry = Math.max(now + 1 + random.nextInt(200), before == null ? 0 : before.expiry);
                cache.put(k, v, expiry - now, TimeUnit.MILLISECONDS);
                model.put(k, new Live(v, expiry));
                note(history, k, op, "put " + v.substring(0, v.indexOf('-')) + " at " + now + " dying at " + expiry);
            } else {
                cache.put(k, v);
                model.put(k, new Live(v, -1));
                note(history, k, op, "put " + v.substring(0, v.indexOf('-')) + " at " + now);
            }
        } else if (what < 50) {
            cache.remove(k);
            model.remove(k);
            note(history, k, op, "remove at " + now);
        } else if (what < 80) {
            assertAsModel(model, k, now, cache.get(k), where + ": get " + k + " at " + now + ", after " + history.get(k));
            note(history, k, op, "get at " + now);
        } else if (what < 85) {
            Map<String, String> all = new TreeMap<>();
            for (int i = 0; i < 1 + random.nextInt(6); i++) {
                String even = "k" + 2 * random.nextInt(KEYS / 2); // keys written without a lifespan
                String v = "b" + op + "-" + i;
                all.put(even, v);
                model.put(even, new Live(v, -1));
                note(history, even, op, "putAll " + v + " at " + now);
            }
            cache.putAll(all);
        } else if (what < 97) {
            time.advance(1 + random.nextInt(60));
        } else {
            history.computeIfAbsent("purges", x -> new StringBuilder()).append(" ").append(op).append(" at ").append(now);
            // What the expiration reaper does, in memory and in the store (the store's purgeExpired).
            cache.getAdvancedCache().getExpirationManager().processExpiration();
        }
    }

    /** Every key as the model says: each live entry with its value, removed and expired ones absent, also in iteration. */
    private static void checkAll(Cache<String, String> cache, Map<String, Live> model, Map<String, StringBuilder> history,
            ControlledTimeService time, String where) {
        long now = time.wallClockTime();
        Map<String, String> iterated = new TreeMap<>(cache);
        for (int i = 0; i < KEYS; i++) {
            String k = "k" + i;
            assertAsModel(model, k, now, iterated.get(k), where + ": iteration at " + now + " finds " + k + ", after "
                    + history.get(k));
            assertAsModel(model, k, now, cache.get(k), where + ": get " + k + " at " + now + ", after " + history.get(k));
        }
    }

    /** Odd keys are written with a lifespan, even ones without. */
    private static boolean mortal(int key) {
        return key % 2 == 1;
    }

    private static void note(Map<String, StringBuilder> history, String k, int op, String what) {
        history.computeIfAbsent(k, x -> new StringBuilder()).append("; ").append(op).append(": ").append(what);
    }

    /**
     * {@code found} is what the model holds for {@code k} at {@code now}. In the millisecond a value
     * dies either answer is right: Infinispan keeps an entry in memory alive through it ({@code
     * now > created + lifespan} is expired) and judges one from a store dead in it ({@code
     * MarshallableEntry.isExpired}: {@code expiry <= now}), as htod's store does.
     */
    private static void assertAsModel(Map<String, Live> model, String k, long now, String found, String what) {
        Live l = model.get(k);
        if (l != null && l.expiry == now && (found == null || found.equals(l.value))) {
            return;
        }
        assertEquals(l == null || !l.alive(now) ? null : l.value, found, what);
    }

    private static Cache<String, String> cache(DefaultCacheManager cm) {
        return cm.getCache("passivated");
    }

    private static DefaultCacheManager start(Path dir, ControlledTimeService time, Durability durability, boolean direct) {
        GlobalConfigurationBuilder global = new GlobalConfigurationBuilder();
        global.globalState().enable().persistentLocation(dir.toString());
        ConfigurationBuilder b = new ConfigurationBuilder();
        b.memory().maxCount(IN_MEMORY);
        b.expiration().disableReaper();
        b.persistence().passivation(true)
                .addStore(HtodStoreConfigurationBuilder.class)
                .location("passivated")
                .durability(durability)
                .directMode(direct)
                .logSize(1 << 20)
                .bufferSize(1 << 20)
                .purgeOnStartup(false);
        DefaultCacheManager cm = new DefaultCacheManager(global.build(), false);
        cm.defineConfiguration("passivated", b.build());
        TestingUtil.replaceComponent(cm, TimeService.class, time, true);
        cm.start();
        return cm;
    }
}
