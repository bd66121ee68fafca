package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.container.ContainerConfig;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * Direct-mode doublings whose writes or syncs fail while the store stays open: for each storage
 * method, at the writes and syncs the doublings of a seeded workload make in turn (some failing
 * after some of their sectors landed, some followed by more failures, so that finishing the failed
 * batch fails too), the workload goes on through two more doublings with puts, replacements and
 * removals of keys in the failed batch's buckets, and
 *
 * <ul>
 *   <li>every read, right after the failure and later, finds what the model allows: the value of
 *       the key's last operation that returned, or of one that failed since;
 *   <li>after a sync, a power cut and a reopen, the store verifies and holds exactly what the
 *       reads last found; in a third of the points the power fails at once after the failure
 *       instead, and the reopened store holds what the model allows;
 *   <li>in a third of the points the store is closed before the power cut: a close that
 *       returns is clean (the reopen runs no recovery), one that fails is not.
 * </ul>
 *
 * A failure names its storage method, the write or sync that failed, and the seed.
 */
class FailedDoublingTest {
    /** Keys put once each; with the load factor 0.75 the table doubles 64 to 128 to 256 to 512. */
    private static final int KEYS = 300;
    /**
     * Every third write or sync of the doublings, each storage method from another one (every
     * one with {@code -Dhtod.test.scale} above 1): 300 points, 12 s on 2 cores.
     */
    private static final int STRIDE = Integer.getInteger("htod.test.scale", 1) > 1 ? 1 : 3;

    /**
     * Fails the {@code n}-th write or sync a doubler makes (a call with {@link Doubler} on its
     * stack), counted from the store's creation, and the {@code more} after it; the failing
     * writes land a seeded number of their sectors first. With {@code n} 0 it only counts.
     */
    static final class DoublerFaults extends ForwardingDevice {
        private static final int SECTOR = 512;
        private final int n;
        private final int more;
        private final SplittableRandom r;
        /** A method the calls counted have on their stack too; null for all. */
        private final String method;
        /** Whether a failing write lands nothing. */
        private boolean landsNothing;
        private int seen;
        /** Failures raised in the unzip, which leave chains half relinked. */
        int inUnzip;
        int raised;

        DoublerFaults(BlockDevice inner, int n, int more, long seed) {
            this(inner, n, more, seed, null);
        }

        DoublerFaults(BlockDevice inner, int n, int more, long seed, String method) {
            super(inner);
            this.n = n;
            this.more = more;
            this.r = new SplittableRandom(seed);
            this.method = method;
        }

        DoublerFaults landingNothing() {
            landsNothing = true;
            return this;
        }

        int seen() {
            return seen;
        }

        /** Whether this call of the doubler fails, and if so, counts it. */
        private boolean fails() {
            boolean[] unzip = {false};
            boolean[] named = {method == null};
            boolean doubler = StackWalker.getInstance().walk(frames -> frames.anyMatch(f -> {
                unzip[0] |= f.getMethodName().equals("unzip");
                named[0] |= f.getMethodName().equals(method);
                return f.getClassName().equals(Doubler.class.getName());
            }));
            if (!doubler || !named[0]) {
                return false;
            }
            seen++;
            if (n == 0 || seen < n || seen > n + more) {
                return false;
            }
            raised++;
            if (unzip[0]) {
                inUnzip++;
            }
            return true;
        }

        private static HtodIOException fault(String what) {
            return new HtodIOException("injected failure of a doubler's " + what, new IOException("injected"));
        }

        @Override
        public synchronized void write(long pos, ByteBuffer src) {
            if (fails()) {
                // whole sectors, as a device writes them: none, some, or all (and reported failed)
                int sectors = (src.remaining() + SECTOR - 1) / SECTOR;
                int part = landsNothing ? 0 : Math.min(src.remaining(), r.nextInt(sectors + 1) * SECTOR);
                if (part > 0) {
                    inner.write(pos, src.duplicate().limit(src.position() + part));
                }
                throw fault("write of " + src.remaining() + " bytes at " + pos);
            }
            inner.write(pos, src);
        }

        @Override
        public synchronized void sync() {
            if (fails()) {
                throw fault("sync");
            }
            inner.sync();
        }
    }

    /** What each key may hold: the value of its last operation that returned, then those of failed ones since. */
    private static final class Model {
        final Map<String, List<byte[]>> possible = new HashMap<>();
        /** Whether reads iterate before they look keys up. */
        boolean iterateFirst;

        void done(String k, byte[] v) {
            List<byte[]> l = new ArrayList<>();
            l.add(v);
            possible.put(k, l);
        }

        void failed(String k, byte[] v) {
            possible.computeIfAbsent(k, x -> {
                List<byte[]> l = new ArrayList<>();
                l.add(null);
                return l;
            }).add(v);
        }

        /** Checks what {@code k} reads. */
        void read(String k, byte[] found, String when) {
            List<byte[]> ok = possible.getOrDefault(k, java.util.Collections.singletonList(null));
            for (byte[] v : ok) {
                if (Arrays.equals(v, found)) {
                    return;
                }
            }
            throw new AssertionError(when + ": key " + k + " reads " + TableCrashTest.Model.describe(found)
                    + ", expected one of " + ok.stream().map(TableCrashTest.Model::describe).toList());
        }
    }

    /** Hash keys from a fixed seed: the workload's buckets, and so the writes counted and the points, replay. */
    private static TableOptions opts() {
        return TableOptions.defaults().withSyncEachWrite(true).withClock(() -> 0L).withCacheBytes(16 << 10)
                .withMaxPendingLinks(24).withDoublingMinBatch(16).withHashKeySeed(0x4654_4454L);
    }

    /** A new direct-mode store over {@code dev}. */
    private static TableStore create(BlockDevice dev, StorageMethod m) {
        return TableStore.open(Storage.create(dev, ContainerConfig.builder().storageMethod(m).grain(64).logSize(0)
                .build()), opts());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private int points;
    private int cutPoints;
    /** Lookups made while a batch that failed in its unzip was unfinished (at their start). */
    private static int besideCut;
    /** Iterations begun while a batch that failed in its unzip was unfinished. */
    private static int iteratedBesideCut;
    private int crashedAtOnce;
    private int failedOps;
    private int closedCleanly;

    @Test
    void aDoublingThatFailsIsFinishedBeforeTheTableIsUsedAgain() {
        for (StorageMethod m : StorageMethod.values()) {
            DoublerFaults counting = new DoublerFaults(new MemoryDevice(), 0, 0, 0);
            run(create(counting, m), m, false, After.NEXT, new Model());
            int total = counting.seen();
            assertTrue(total > 100, m + ": the workload's doublings make only " + total + " writes and syncs");
            for (int n = 1 + m.ordinal() % STRIDE; n <= total; n += STRIDE) {
                long seed = (long) m.ordinal() << 32 | n;
                try {
                    point(m, n, seed);
                } catch (Throwable e) {
                    throw new AssertionError(m + " n=" + n + " seed=" + seed + ": " + e, e);
                }
            }
        }
        System.out.println(points + " failed doubler writes and syncs, " + cutPoints + " in an unzip, " + crashedAtOnce
                + " followed by a power cut at once, " + closedCleanly + " closed cleanly first, " + failedOps
                + " operations failed, " + besideCut + " lookups and " + iteratedBesideCut + " iterations while a batch"
                + " cut in its unzip was unfinished");
        assertTrue(cutPoints >= points / 10, "only " + cutPoints + " of " + points + " failures fell in an unzip");
        assertTrue(besideCut > 0 && iteratedBesideCut > 0, "no lookup or no iteration met a batch cut in its unzip");
    }

    /**
     * The write of the header that names a doubling's new array fails, the header holding the
     * table's count already (a sync wrote it just before), and the store is closed at once: the
     * close writes the header again, so that the array, in use, is named (a clean reopen runs no
     * recovery that would free an array nothing names).
     */
    @Test
    void aCleanCloseAfterADoublingsStartFailedLeavesNoBlockUnnamed() throws InterruptedException {
        for (StorageMethod m : StorageMethod.values()) {
            MemoryDevice disk = new MemoryDevice();
            DoublerFaults dev = new DoublerFaults(disk, 1, 0, 1, "writeHeader").landingNothing();
            TableStore ts = create(dev, m);
            HashtableOnDisk t = ts.table("t", true);
            Model model = new Model();
            // Another thread holds the doubler off while the count passes the load factor and a
            // sync records it; then this one starts the doubling.
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread holder = new Thread(() -> {
                t.doubling.lock();
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    t.doubling.unlock();
                }
            });
            holder.start();
            held.await();
            for (int i = 0; !t.doublingDue(0); i++) {
                write(t, model, List.of("key" + i), List.of(new byte[] {(byte) i}));
            }
            ts.sync();
            release.countDown();
            holder.join();
            HtodException failed = assertThrows(HtodException.class, t::maybeDouble);
            assertTrue(dev.raised == 1 && failed.getMessage().contains("injected"), m + ": " + failed);
            ts.close();
            TableStore reopened = TableStore.open(Storage.open(disk.reopen()), opts());
            assertTrue(reopened.recovery() == null, m + ": the close was not clean");
            reopened.verify(true);
            lookUp(reopened.table("t", false), model, m + ", after the reopen", true);
            reopened.close();
        }
    }

    /**
     * A lookup of an expired key, beside a batch that failed in its unzip and cannot be finished
     * (every relinking write fails): it reads as absent, as always, though removing the dead entry
     * fails; live keys read as they are.
     */
    @Test
    void anExpiredKeyReadsAbsentBesideABatchThatCannotBeFinished() {
        long[] now = {0};
        DoublerFaults dev = new DoublerFaults(new MemoryDevice(), 1, Integer.MAX_VALUE - 1, 1, "unzip").landingNothing();
        TableStore ts = TableStore.open(Storage.create(dev, ContainerConfig.builder().grain(64).logSize(0).build()),
                opts().withClock(() -> now[0]));
        HashtableOnDisk t = ts.table("t", true);
        int written = 0;
        for (int i = 0; i < 1000 && t.unfinished == null; i++) {
            byte[] v = {(byte) i};
            long expiry = i % 2 == 0 ? 10 : 0; // the even keys die at 10
            try {
                t.update(bytes("key" + i), cur -> Change.put(v, expiry));
                written = i + 1;
            } catch (HtodException e) {
                rethrowUnlessFailedDevice(e, false);
            }
        }
        assertTrue(t.unfinished != null && t.unfinished.cut(), "no batch was cut in its unzip");
        now[0] = 100;
        for (int i = 0; i < written; i++) {
            StoredEntry e = t.get(bytes("key" + i));
            if (i % 2 == 0) {
                assertTrue(e == null, "key" + i + " expired, reads " + e);
            } else {
                assertTrue(e != null && e.value()[0] == (byte) i, "key" + i + " reads " + e);
            }
        }
    }

    /**
     * A batch cut before it relinked anything, every relinking write failing from then on, with a
     * long chain of both classes in its range: lookups and an iteration read beside it, each key
     * once, with its value. Read from the new array, whose slots already name each class's first
     * entry while the entries still link the old chain, the chain gives entries of the other class
     * (an iteration that did so met "expected an entry hashing to bucket ...").
     */
    @Test
    void aLongChainOfABatchThatCannotBeFinishedIsReadBesideIt() {
        DoublerFaults dev = new DoublerFaults(new MemoryDevice(), 1, Integer.MAX_VALUE - 1, 1, "unzip").landingNothing();
        TableStore ts = TableStore.open(Storage.create(dev, ContainerConfig.builder().grain(64).logSize(0).build()),
                opts());
        HashtableOnDisk t = ts.table("t", true);
        long n = t.shape.n();
        Map<String, Byte> returned = new HashMap<>();
        String maybe = null;
        int colliding = 0;
        for (int i = 0; i < 100_000 && t.unfinished == null; i++) {
            String k = "key" + i;
            boolean inChain = (t.hash(bytes(k)) & (n - 1)) == 5;
            if (!inChain && colliding < 24) {
                continue; // first a chain of 24 in old bucket 5, then any keys until a doubling begins
            }
            colliding += inChain ? 1 : 0;
            byte[] v = {(byte) i};
            try {
                t.update(bytes(k), cur -> Change.put(v, 0));
                returned.put(k, v[0]);
            } catch (HtodException e) {
                rethrowUnlessFailedDevice(e, false);
                maybe = k;
            }
        }
        Doubler.Unfinished u = t.unfinished;
        assertTrue(u != null && u.cut() && u.from() <= 5 && 5 < u.from() + u.k(), "no batch over bucket 5 was cut");
        Map<String, byte[]> iterated = new HashMap<>();
        for (java.util.Iterator<StoredEntry> it = t.iterator(true); it.hasNext();) {
            StoredEntry e = it.next();
            String k = new String(e.key(), StandardCharsets.UTF_8);
            assertTrue(iterated.put(k, e.value()) == null, "iteration gave " + k + " twice");
        }
        if (maybe != null) {
            iterated.remove(maybe);
        }
        assertEquals(returned.keySet(), iterated.keySet(), "the keys iterated");
        for (Map.Entry<String, Byte> e : returned.entrySet()) {
            assertEquals(e.getValue(), iterated.get(e.getKey())[0], e.getKey() + " iterated");
            assertEquals(e.getValue(), t.get(bytes(e.getKey())).value()[0], e.getKey() + " looked up");
        }
    }

    private void point(StorageMethod m, int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk);
        DoublerFaults dev = new DoublerFaults(crash, n, r.nextInt(3) == 0 ? 1 + r.nextInt(6) : 0, seed);
        int cleanBefore = closedCleanly;
        boolean atOnce = r.nextInt(3) == 0;
        Model model = new Model();
        model.iterateFirst = r.nextBoolean();
        boolean closeFirst = r.nextInt(3) == 0;
        TableStore ts = create(dev, m);
        boolean finished = run(ts, m, atOnce, After.values()[r.nextInt(After.values().length)], model);
        if (closeFirst) {
            // a clean close, unless it fails: then the next open recovers
            try {
                ts.close();
                closedCleanly++;
            } catch (HtodException e) {
                rethrowUnlessFailedDevice(e, false);
            }
        }
        points++;
        assertTrue(dev.raised > 0, "the armed failure never came");
        if (dev.inUnzip > 0) {
            cutPoints++;
        }
        if (!finished) {
            crashedAtOnce++;
        }
        crash.crash(seed);
        TableStore reopened = TableStore.open(Storage.open(disk.reopen()), opts());
        if (closeFirst && (reopened.recovery() == null) != (closedCleanly == cleanBefore + 1)) {
            throw new AssertionError("closed " + (closedCleanly > cleanBefore ? "" : "un") + "cleanly, yet reopened "
                    + (reopened.recovery() == null ? "without" : "with") + " a recovery");
        }
        reopened.verify(true);
        lookUp(reopened.table("t", false), model, "after the power cut", true);
        reopened.close();
    }

    /** What comes first after a failed operation, besides reads. */
    private enum After {
        /** The workload's next operation. */
        NEXT,
        /** A clear of the table. */
        CLEAR,
        /** The doubler, as another writer's call would run it before anything else. */
        DOUBLER,
        /** A batch replacing keys of the failed batch's buckets, then the removal of one. */
        IN_RANGE
    }

    /** Keys the workload wrote whose buckets the batch a failure left unfinished moves (any keys if none). */
    private static List<String> inRange(HashtableOnDisk t, Model model) {
        Doubler.Unfinished u = t.unfinished;
        List<String> keys = new ArrayList<>();
        for (String k : new java.util.TreeSet<>(model.possible.keySet())) {
            long b = u == null ? -1 : t.hash(bytes(k)) & (u.s().n() - 1);
            if (u == null || (b >= u.from() && b < u.from() + u.k())) {
                keys.add(k);
            }
        }
        return keys;
    }

    /**
     * The seeded workload on a new store: puts of new keys, replacements and
     * removals of earlier ones, one at a time or a few in a batch. With {@code atOnce} it stops
     * at the first failure, else it goes on, with {@code after} first, and ends with every key
     * read and a sync. Returns whether it ran to its end.
     */
    private boolean run(TableStore ts, StorageMethod m, boolean atOnce, After after, Model model) {
        HashtableOnDisk t = ts.table("t", true);
        SplittableRandom w = new SplittableRandom(m.ordinal() * 31L + 7); // the same operations in every point
        int nextKey = 0;
        int failures = 0;
        for (int op = 0; nextKey < KEYS; op++) {
            int kind = w.nextInt(10);
            List<String> ks = new ArrayList<>();
            List<byte[]> vs = new ArrayList<>();
            for (int i = kind == 8 ? 4 : 1; i > 0; i--) {
                ks.add("key" + (kind < 6 || i == 4 ? nextKey++ : w.nextInt(nextKey + 1)));
                vs.add(kind == 9 ? null : value(w, op));
            }
            if (!write(t, model, ks, vs)) {
                failures++;
                if (atOnce) {
                    return false;
                }
                if (failures == 1) {
                    afterFailure(t, model, after, w, op);
                }
                if (failures <= 3) {
                    // after a failed sync the heap refuses changes, and every later operation fails
                    readAll(t, model, "after the failure at operation " + op, false);
                }
            }
            if (op % 50 == 49) {
                readAll(t, model, "at operation " + op, false);
            }
        }
        try {
            ts.sync();
        } catch (HtodException e) {
            rethrowUnlessFailedDevice(e, false);
            failedOps++;
            readAll(t, model, "at the end", false);
            return true;
        }
        readAll(t, model, "at the end", true);
        return true;
    }

    /** What the point does first after the first failed operation: see {@link After}. */
    private void afterFailure(HashtableOnDisk t, Model model, After after, SplittableRandom w, int op) {
        switch (after) {
            case NEXT -> { }
            case CLEAR -> {
                List<String> all = new ArrayList<>(model.possible.keySet());
                try {
                    t.clear();
                    all.forEach(k -> model.done(k, null));
                } catch (HtodException e) {
                    rethrowUnlessFailedDevice(e, false);
                    failedOps++;
                    all.forEach(k -> model.failed(k, null));
                }
            }
            case DOUBLER -> {
                try {
                    t.maybeDouble();
                } catch (HtodException e) {
                    rethrowUnlessFailedDevice(e, false);
                }
            }
            case IN_RANGE -> {
                List<String> ks = inRange(t, model);
                ks = ks.subList(0, Math.min(5, ks.size()));
                List<byte[]> vs = new ArrayList<>();
                for (int i = 0; i < ks.size(); i++) {
                    vs.add(i < ks.size() - 1 ? value(w, op) : null);
                }
                if (ks.size() > 1) {
                    write(t, model, ks.subList(0, ks.size() - 1), vs.subList(0, ks.size() - 1));
                }
                if (!ks.isEmpty()) {
                    write(t, model, ks.subList(ks.size() - 1, ks.size()), vs.subList(ks.size() - 1, ks.size()));
                }
            }
        }
    }

    /**
     * Puts ({@code null}: removals), one by an update, more by a batch, as the model expects
     * them; returns whether they returned.
     */
    private boolean write(HashtableOnDisk t, Model model, List<String> ks, List<byte[]> vs) {
        try {
            if (ks.size() == 1) {
                byte[] v = vs.get(0);
                t.update(bytes(ks.get(0)), cur -> v == null ? (cur == null ? null : Change.REMOVE) : Change.put(v, 0));
            } else {
                t.putAll(ks.stream().map(FailedDoublingTest::bytes).toList(), vs, 0);
            }
            for (int i = 0; i < ks.size(); i++) {
                model.done(ks.get(i), vs.get(i));
            }
            return true;
        } catch (HtodException e) {
            rethrowUnlessFailedDevice(e, false);
            failedOps++;
            for (int i = 0; i < ks.size(); i++) {
                model.failed(ks.get(i), vs.get(i));
            }
            return false;
        }
    }

    /**
     * Reads every key the workload touched, by lookups and by an iteration, in the order the
     * point drew (the first to meet a failed batch finishes it); what the failing device stops is
     * left out. With {@code durable} (a sync has just made what they read durable), each key's
     * possibilities narrow to what it read.
     */
    private static void readAll(HashtableOnDisk t, Model model, String when, boolean durable) {
        if (model.iterateFirst) {
            iterate(t, model, when, durable);
            lookUp(t, model, when, durable);
        } else {
            lookUp(t, model, when, durable);
            iterate(t, model, when, durable);
        }
    }

    /**
     * Looks every key up. A lookup never fails: one that finds a failed batch it cannot finish
     * answers from the chains (see {@code HashtableOnDisk.lockViewOrBeside}).
     */
    private static void lookUp(HashtableOnDisk t, Model model, String when, boolean durable) {
        for (String k : new ArrayList<>(model.possible.keySet())) {
            Doubler.Unfinished u = t.unfinished;
            if (u != null && u.cut()) {
                besideCut++;
            }
            StoredEntry e = t.get(bytes(k));
            model.read(k, e == null ? null : e.value(), when);
            if (durable) {
                model.done(k, e == null ? null : e.value());
            }
        }
    }

    /** Iterates the table. An iteration never fails: beside a failed batch it cannot finish, it reads the kept chains. */
    private static void iterate(HashtableOnDisk t, Model model, String when, boolean durable) {
        Map<String, byte[]> iterated = new HashMap<>();
        Doubler.Unfinished u = t.unfinished;
        if (u != null && u.cut()) {
            iteratedBesideCut++;
        }
        for (java.util.Iterator<StoredEntry> it = t.iterator(true); it.hasNext();) {
            StoredEntry e = it.next();
            if (iterated.put(new String(e.key(), StandardCharsets.UTF_8), e.value()) != null) {
                throw new AssertionError(when + ": iteration gave " + new String(e.key(), StandardCharsets.UTF_8) + " twice");
            }
        }
        for (String k : model.possible.keySet()) {
            model.read(k, iterated.remove(k), when + ", iterating");
        }
        assertTrue(iterated.isEmpty(), when + ": iteration found keys never written: " + iterated.keySet());
    }

    /**
     * An operation may fail while the device fails (or the heap refuses changes after a failed
     * sync), never on a damaged table, nor once everything is synced ({@code durable}).
     */
    private static void rethrowUnlessFailedDevice(HtodException e, boolean durable) {
        if (durable || e instanceof CorruptStoreException) {
            throw e;
        }
    }

    private static byte[] value(SplittableRandom r, int op) {
        byte[] v = new byte[1 + r.nextInt(r.nextInt(8) == 0 ? 900 : 24)];
        r.nextBytes(v);
        v[0] = (byte) op;
        return v;
    }
}
