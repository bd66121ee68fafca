package org.htod;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.htod.core.StoreClosedException;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.ManualClock;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Reads racing the flusher in log mode, against a model: writers that each own their keys change
 * them through every kind of write (their functions and the values they return checked against
 * the model), while readers get, test and iterate, and another thread runs checkpoints, syncs and
 * copies. The flusher is kept busy: a small buffer, small install batches, a small log, tables
 * that double in small batches.
 *
 * <p>Each change of a key has a number; a value carries its change's number. A read that began
 * after change {@code a} was acknowledged and ended before change {@code b} began must show one
 * of the changes {@code a..b} (a removal, or an expired put, as no value), and a reader never
 * sees a key go back to an older change than one it saw.
 */
@ExtendWith(VerifyStores.class)
class ReadsBesideTheFlusherTest {
    private static final int WRITERS = 3;
    private static final int KEYS = 250;
    private static final int OPS = 4000;
    /** The store-wide operations run beside (digits of the admin thread's draws): all by default. */
    private static final String ADMIN = System.getProperty("htod.test.admin", "0123456789");

    /** Per key: the kind and expiry of each change, how many began and how many were acknowledged. */
    static final class Model {
        final int keys = WRITERS * KEYS;
        /** 0 none yet; 1 put; 2 removal. Written before the change begins. */
        final byte[][] kind = new byte[keys][OPS + 1];
        /** The least and the most a change's expiry may be (the clock may move while it is put); 0 none. */
        final long[][] expiry = new long[keys][OPS + 1];
        final long[][] expiryMost = new long[keys][OPS + 1];
        /** The writer's operation of each change. */
        final byte[][] op = new byte[keys][OPS + 1];
        final AtomicIntegerArray started = new AtomicIntegerArray(keys);
        final AtomicIntegerArray acked = new AtomicIntegerArray(keys);

        static String key(int k) {
            return "w" + k;
        }

        /** Whether change {@code j} of key {@code k} leaves it absent for a read that may have run at {@code clockEnd}. */
        boolean absentAfter(int k, int j, long clockEnd) {
            return j == 0 || kind[k][j] == 2 || expiry[k][j] != 0 && expiry[k][j] <= clockEnd;
        }

        /**
         * Checks a read of key {@code k} that saw {@code value} (null: none) and answers the change
         * it shows at the least.
         */
        int check(String what, int k, String value, int floor, int hi, long clockStart, long clockEnd) {
            if (value == null) {
                for (int j = floor; j <= hi; j++) {
                    if (absentAfter(k, j, clockEnd)) {
                        return j;
                    }
                }
                throw new AssertionError(what + ": " + key(k) + " absent, but changes " + floor + ".." + hi
                        + " are puts live at " + clockEnd + " (" + describe(k, floor - 6, hi) + ")");
            }
            int j = parse(k, value);
            if (j < floor || j > hi) {
                throw new AssertionError(what + ": " + key(k) + " shows change " + j + ", expected one of " + floor + ".."
                        + hi + " (" + describe(k, floor, hi) + ")");
            }
            if (kind[k][j] != 1) {
                throw new AssertionError(what + ": " + key(k) + " shows change " + j + ", which is not a put");
            }
            if (expiryMost[k][j] != 0 && expiryMost[k][j] <= clockStart) {
                throw new AssertionError(what + ": " + key(k) + " shows change " + j + ", expired at " + expiry[k][j]
                        + " before the read began at " + clockStart);
            }
            return j;
        }

        String describe(int k, int from, int to) {
            StringBuilder b = new StringBuilder();
            for (int j = Math.max(0, from); j <= to && j <= OPS; j++) {
                b.append(j).append(kind[k][j] == 1 ? "=put" : kind[k][j] == 2 ? "=rm" : "=none").append('/').append(op[k][j]);
                if (expiry[k][j] != 0) {
                    b.append("@").append(expiry[k][j]).append("..").append(expiryMost[k][j]);
                }
                b.append(' ');
            }
            return b.toString().trim();
        }

        static String value(int k, int j, int pad) {
            return j + ":" + k + ":" + "x".repeat(pad);
        }

        static int parse(int k, String value) {
            int a = value.indexOf(':');
            int b = value.indexOf(':', a + 1);
            int j = Integer.parseInt(value.substring(0, a));
            if (Integer.parseInt(value.substring(a + 1, b)) != k) {
                throw new AssertionError(key(k) + " holds a value of another key: " + value.substring(0, b));
            }
            for (int i = b + 1; i < value.length(); i++) {
                if (value.charAt(i) != 'x') {
                    throw new AssertionError(key(k) + " holds a damaged value");
                }
            }
            return j;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory-nocache", "memory-smallcache", "memory-cache", "file-placed"})
    void readsNeverMissOrGoBackWhileTheFlusherInstalls(String config, OpenedStores stores) throws Exception {
        long seed = Long.getLong("htod.test.seed", System.nanoTime());
        ManualClock clock = new ManualClock();
        Path file = config.startsWith("file") ? stores.newFile("reads-flusher") : null;
        long cache = config.endsWith("nocache") ? 0 : config.endsWith("smallcache") ? 16 << 10 : 1 << 20;
        java.util.function.UnaryOperator<Htod.Builder> options = b -> b.grain(64).logSize(256 << 10)
                .durability(Durability.NONE).bufferSize(64 << 10).installBatch(16).tuning(8, 64).cacheSize(cache)
                .clock(clock).placeValuesFrom(config.endsWith("placed") ? 2000 : 0);
        HtodStore store = file != null ? stores.open(file, options) : stores.open(new MemoryDevice(), options);
        HtodMap<String, String> m = store.map("m", Codec.string(), Codec.string());
        Model model = new Model();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicReference<List<String>> iterated = new java.util.concurrent.atomic.AtomicReference<>(List.of());
        List<Thread> threads = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(Integer.getInteger("htod.test.seconds", 4)).toNanos();
        for (int w = 0; w < WRITERS; w++) {
            int id = w;
            threads.add(new Thread(() -> guard(errors, running, () -> write(m, model, clock, id, seed, deadline))));
        }
        AtomicLong grown = new AtomicLong();
        threads.add(new Thread(() -> guard(errors, running, () -> {
            // keys that only come, so that the table keeps doubling while everything else runs
            while (running.get() && System.nanoTime() < deadline) {
                long g = grown.get();
                m.set("g" + g, "g" + g);
                grown.set(g + 1);
            }
        })));
        for (int r = 0; r < 2; r++) {
            int id = r;
            threads.add(new Thread(() -> guard(errors, running, () -> read(m, model, clock, seed * 7 + id, running, grown))));
        }
        threads.add(new Thread(() -> guard(errors, running, () -> iterate(m, model, clock, running, iterated, grown))));
        threads.add(new Thread(() -> guard(errors, running, () -> {
            SplittableRandom r = new SplittableRandom(seed * 13);
            while (running.get()) {
                int op = r.nextInt(10);
                if (!ADMIN.contains("" + op)) {
                    Thread.sleep(1);
                    continue;
                }
                if (op < 3) {
                    store.checkpoint();
                } else if (op < 6) {
                    store.sync();
                } else if (op < 8) {
                    clock.advance(1 + r.nextInt(3));
                } else if (file != null && op == 8) {
                    store.compact(Progress.NONE);
                } else {
                    Path copy = TestStores.tempFile("reads-flusher-copy");
                    try {
                        store.copyTo(copy, Progress.NONE);
                    } finally {
                        TestStores.delete(copy);
                    }
                }
                Thread.sleep(r.nextInt(20));
            }
        })));
        threads.forEach(Thread::start);
        for (int w = 0; w < WRITERS; w++) {
            threads.get(w).join();
        }
        running.set(false);
        for (Thread t : threads) {
            t.join();
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("seed=" + seed + " config=" + config + ": " + errors.size()
                    + " threads failed: " + errors.peek());
            errors.forEach(e::addSuppressed);
            throw e;
        }
        // Quiescent: every key as the model says, and the size exact, while the flusher installs.
        clock.advance(1000); // every expiry past: swept, the size counts live keys only
        m.sweepExpired();
        long expected = iterated.get().size() + grown.get();
        long now = clock.millis();
        for (int k = 0; k < model.keys; k++) {
            int j = model.acked.get(k);
            model.check("final get", k, m.get(Model.key(k)), j, j, now, now);
            if (j > 0 && model.kind[k][j] == 1 && model.expiry[k][j] == 0) {
                expected++;
            }
        }
        if (expected != m.longSize()) {
            throw new AssertionError("seed=" + seed + " config=" + config + ": size " + m.longSize() + ", expected "
                    + expected);
        }
        store.checkpoint();
        if (expected != m.longSize()) {
            throw new AssertionError("seed=" + seed + " config=" + config + ": size after a checkpoint " + m.longSize()
                    + ", expected " + expected);
        }
        store.close();
    }

    private static void guard(ConcurrentLinkedQueue<Throwable> errors, AtomicBoolean running, Body body) {
        try {
            body.run();
        } catch (Throwable e) {
            errors.add(e);
            running.set(false);
        }
    }

    interface Body {
        void run() throws Exception;
    }

    /** Writer {@code id}: changes its keys through every kind of write, checking what each says the key held. */
    private static void write(HtodMap<String, String> m, Model model, ManualClock clock, int id, long seed, long deadline) {
        SplittableRandom r = new SplittableRandom(seed * 31 + id);
        int from = id * KEYS;
        while (System.nanoTime() < deadline) {
            int k = from + r.nextInt(KEYS);
            int j = model.started.get(k) + 1;
            if (j > OPS) {
                continue;
            }
            int prev = j - 1;
            String key = Model.key(k);
            int op = r.nextInt(12);
            boolean remove = op >= 9;
            long ttl = !remove && r.nextInt(5) == 0 ? 1 + r.nextInt(8) : 0;
            int pad = r.nextInt(20) == 0 ? 2000 + r.nextInt(5000) : r.nextInt(100);
            String v = Model.value(k, j, pad);
            long c0 = clock.millis();
            model.kind[k][j] = (byte) (remove ? 2 : 1);
            model.op[k][j] = (byte) op;
            model.expiry[k][j] = ttl == 0 ? 0 : c0 + ttl;
            model.expiryMost[k][j] = ttl == 0 ? 0 : Long.MAX_VALUE; // until the put returns
            model.started.set(k, j);
            String what = "writer " + id + " op " + op;
            String seenPrev;
            if (ttl != 0) {
                // the expiry must be the model's: the clock may not move between reading it and the put
                seenPrev = m.put(key, v, Duration.ofMillis(ttl));
                // the clock may have moved under the put: its expiry lies between
                model.expiryMost[k][j] = clock.millis() + ttl;
            } else {
                seenPrev = switch (op) {
                    case 0, 1 -> m.put(key, v);
                    case 2 -> {
                        String[] old = {null};
                        m.compute(key, (kk, o) -> {
                            old[0] = o;
                            return v;
                        });
                        yield old[0];
                    }
                    case 3 -> {
                        String[] old = {"none"};
                        m.merge(key, v, (o, n) -> {
                            old[0] = o;
                            return n;
                        });
                        // a retry that found the key expired meanwhile does not ask the function
                        yield model.expiry[k][prev] != 0 ? "unknown" : "none".equals(old[0]) ? null : old[0];
                    }
                    case 4 -> {
                        String o = m.putIfAbsent(key, v);
                        if (o != null && !m.replace(key, o, v)) {
                            if (model.expiry[k][prev] == 0) {
                                throw new AssertionError(what + ": replace of " + key + " from what putIfAbsent saw failed");
                            }
                            m.put(key, v); // what it saw expired since
                        }
                        yield o;
                    }
                    case 5 -> {
                        // a function may be asked again, and the last decision may not ask it
                        String[] old = {null};
                        String now = m.computeIfPresent(key, (kk, o) -> {
                            old[0] = o;
                            return v;
                        });
                        if (now == null) {
                            m.computeIfAbsent(key, kk -> v);
                            yield null;
                        }
                        yield old[0];
                    }
                    case 6 -> {
                        m.set(key, v);
                        yield "unknown";
                    }
                    case 7 -> {
                        m.putAll(Map.of(key, v));
                        yield "unknown";
                    }
                    case 8 -> {
                        String o = m.get(key);
                        m.put(key, v);
                        yield o;
                    }
                    case 9 -> m.remove(key);
                    case 10 -> {
                        m.delete(key);
                        yield "unknown";
                    }
                    default -> {
                        String[] old = {null};
                        m.compute(key, (kk, o) -> {
                            old[0] = o;
                            return null;
                        });
                        yield old[0];
                    }
                };
            }
            long c1 = clock.millis();
            model.acked.set(k, j);
            if (!"unknown".equals(seenPrev)) {
                model.check(what + " saw before change " + j, k, seenPrev, prev, prev, c0, c1);
            }
        }
    }

    /** A reader: gets and tests keys at random, each against the model and against what it saw before. */
    private static void read(HtodMap<String, String> m, Model model, ManualClock clock, long seed, AtomicBoolean running,
            AtomicLong grown) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] floor = new int[model.keys];
        while (running.get()) {
            long n = grown.get();
            if (n > 0 && r.nextInt(3) == 0) {
                long g = r.nextLong(n);
                String v = r.nextBoolean() ? m.get("g" + g) : m.containsKey("g" + g) ? "g" + g : null;
                if (!("g" + g).equals(v)) {
                    throw new AssertionError("g" + g + ", put before the read began, read " + v + " (" + n + " put)");
                }
                continue;
            }
            int k = r.nextInt(model.keys);
            String key = Model.key(k);
            int lo = Math.max(floor[k], model.acked.get(k));
            long c0 = clock.millis();
            String v;
            int how = r.nextInt(3);
            if (how == 0) {
                v = m.get(key);
            } else if (how == 1) {
                v = m.getOrDefault(key, null);
            } else {
                boolean has = m.containsKey(key);
                long c1 = clock.millis();
                int hi = model.started.get(k);
                if (!has) {
                    floor[k] = model.check("containsKey", k, null, lo, hi, c0, c1);
                } else {
                    // present: some put of lo..hi live at some point of the read
                    boolean ok = false;
                    for (int j = lo; j <= hi && !ok; j++) {
                        ok = j > 0 && model.kind[k][j] == 1 && (model.expiryMost[k][j] == 0 || model.expiryMost[k][j] > c0);
                    }
                    if (!ok) {
                        throw new AssertionError("containsKey: " + key + " present, but changes " + lo + ".." + hi + " ("
                                + model.describe(k, lo - 6, hi) + ") leave it absent at " + c0);
                    }
                }
                continue;
            }
            long c1 = clock.millis();
            int hi = model.started.get(k);
            try {
                floor[k] = model.check(how == 0 ? "get" : "getOrDefault", k, v, lo, hi, c0, c1);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; read again: " + m.get(key) + ", history "
                        + model.describe(k, lo - 6, hi) + ", now " + model.started.get(k) + " at " + clock.millis(), e);
            }
        }
    }

    /**
     * Iterates: each pass first puts its own fresh keys and removes the last pass's, so that those
     * move from the buffer to the table while it runs; each key present throughout comes once,
     * the last pass's keys never, and every other key as the model allows.
     */
    private static void iterate(HtodMap<String, String> m, Model model, ManualClock clock, AtomicBoolean running,
            java.util.concurrent.atomic.AtomicReference<List<String>> iterated, AtomicLong grown) {
        int pass = 0;
        List<String> last = new ArrayList<>();
        while (running.get()) {
            for (String k : last) {
                m.remove(k);
            }
            List<String> mine = new ArrayList<>();
            Map<String, String> batch = new HashMap<>();
            for (int i = 0; i < 40; i++) {
                String k = "it" + pass + "-" + i;
                mine.add(k);
                if (i % 2 == 0) {
                    m.put(k, "s");
                } else {
                    batch.put(k, "s");
                }
            }
            m.putAll(batch);
            iterated.set(mine);
            int[] lo = new int[model.keys];
            for (int k = 0; k < model.keys; k++) {
                lo[k] = model.acked.get(k);
            }
            long c0 = clock.millis();
            long grownBefore = grown.get();
            Set<String> seen = new HashSet<>();
            Map<Integer, String> values = new HashMap<>();
            try {
                for (Map.Entry<String, String> e : m.entrySet()) {
                    if (!seen.add(e.getKey())) {
                        throw new AssertionError("one pass returned " + e.getKey() + " twice");
                    }
                    if (e.getKey().startsWith("w")) {
                        values.put(Integer.parseInt(e.getKey().substring(1)), e.getValue());
                    }
                }
            } catch (StoreClosedException swapped) {
                pass++;
                last = mine;
                continue; // an online compaction swapped the file under the iteration
            }
            long c1 = clock.millis();
            for (long g = 0; g < grownBefore; g++) {
                if (!seen.contains("g" + g)) {
                    throw new AssertionError("pass " + pass + " missed g" + g + ", present throughout (" + grownBefore
                            + " put before it began)");
                }
            }
            for (String k : mine) {
                if (!seen.contains(k)) {
                    throw new AssertionError("pass " + pass + " missed " + k + ", present throughout");
                }
            }
            for (String k : last) {
                if (seen.contains(k)) {
                    throw new AssertionError("pass " + pass + " returned " + k + ", removed before it began");
                }
            }
            for (Map.Entry<Integer, String> e : values.entrySet()) {
                int k = e.getKey();
                model.check("iteration", k, e.getValue(), lo[k], model.started.get(k), c0, c1);
            }
            for (int k = 0; k < model.keys; k++) {
                if (!values.containsKey(k)) {
                    int hi = model.started.get(k);
                    boolean maybeAbsent = false;
                    for (int j = lo[k]; j <= hi && !maybeAbsent; j++) {
                        maybeAbsent = model.absentAfter(k, j, c1);
                    }
                    if (!maybeAbsent) {
                        throw new AssertionError("iteration missed " + Model.key(k) + ", present throughout ("
                                + model.describe(k, lo[k], hi) + ")");
                    }
                }
            }
            last = mine;
            pass++;
        }
    }

    /**
     * Clears and sweeps beside writers, readers and the flusher: nothing read is a value never
     * put, no pass gives a key twice, and once all is quiet, size, iteration and gets agree.
     */
    @org.junit.jupiter.api.Test
    void clearsAndSweepsBesideTheFlusherLeaveSizeIterationAndGetsAgreeing(OpenedStores stores) throws Exception {
        long seed = Long.getLong("htod.test.seed", System.nanoTime());
        ManualClock clock = new ManualClock();
        HtodStore store = stores.open(new MemoryDevice(), b -> b.grain(64).logSize(256 << 10).durability(Durability.NONE)
                .bufferSize(64 << 10).installBatch(16).tuning(8, 64).cacheSize(16 << 10).clock(clock));
        HtodMap<String, String> m = store.map("c", Codec.string(), Codec.string());
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            int id = w;
            threads.add(new Thread(() -> guard(errors, running, () -> {
                SplittableRandom r = new SplittableRandom(seed + id);
                while (System.nanoTime() < deadline && running.get()) {
                    int k = r.nextInt(3000);
                    if (r.nextInt(4) == 0) {
                        m.remove("c" + k);
                    } else if (r.nextInt(3) == 0) {
                        m.put("c" + k, "c" + k + ":" + r.nextInt(1000), Duration.ofMillis(1 + r.nextInt(20)));
                    } else {
                        m.put("c" + k, "c" + k + ":" + r.nextInt(1000));
                    }
                }
            })));
        }
        threads.add(new Thread(() -> guard(errors, running, () -> {
            SplittableRandom r = new SplittableRandom(seed * 3);
            while (System.nanoTime() < deadline && running.get()) {
                int op = r.nextInt(4);
                if (op == 0) {
                    m.clear();
                } else if (op == 1) {
                    m.sweepExpired();
                } else {
                    clock.advance(1 + r.nextInt(5));
                }
                Thread.sleep(r.nextInt(30));
            }
        })));
        threads.add(new Thread(() -> guard(errors, running, () -> {
            SplittableRandom r = new SplittableRandom(seed * 5);
            while (running.get()) {
                int k = r.nextInt(3000);
                String v = m.get("c" + k);
                if (v != null && !v.startsWith("c" + k + ":")) {
                    throw new AssertionError("c" + k + " read " + v);
                }
                if (r.nextInt(200) == 0) {
                    Set<String> seen = new HashSet<>();
                    for (Map.Entry<String, String> e : m.entrySet()) {
                        if (!seen.add(e.getKey()) || !e.getValue().startsWith(e.getKey() + ":")) {
                            throw new AssertionError("iteration gave " + e.getKey() + " = " + e.getValue()
                                    + (seen.contains(e.getKey()) ? " twice" : ""));
                        }
                    }
                }
            }
        })));
        threads.forEach(Thread::start);
        for (int i = 0; i < 3; i++) {
            threads.get(i).join();
        }
        running.set(false);
        for (Thread t : threads) {
            t.join();
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("seed=" + seed + ": " + errors.peek());
            errors.forEach(e::addSuppressed);
            throw e;
        }
        for (int round = 0; round < 2; round++) {
            int got = 0;
            for (int k = 0; k < 3000; k++) {
                got += m.containsKey("c" + k) ? 1 : 0;
            }
            int iterated = 0;
            for (String k : m.keySet()) {
                iterated++;
            }
            long expired = 0;
            for (java.util.Iterator<StoreEntry> it = store.entries("c"); it.hasNext(); it.next()) {
                expired++;
            }
            if (got != iterated || expired != iterated) {
                throw new AssertionError("seed=" + seed + ": " + got + " keys found, " + iterated + " iterated, "
                        + expired + " entries");
            }
            clock.advance(1000);
            m.sweepExpired();
            got = 0;
            for (int k = 0; k < 3000; k++) {
                got += m.containsKey("c" + k) ? 1 : 0;
            }
            if (got != m.longSize()) {
                throw new AssertionError("seed=" + seed + ": " + got + " keys found, size " + m.longSize());
            }
            m.clear();
            if (m.longSize() != 0 || m.keySet().iterator().hasNext()) {
                throw new AssertionError("seed=" + seed + ": size " + m.longSize() + " after a clear");
            }
            store.checkpoint();
        }
        store.close();
    }
}
