package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.core.HtodException;
import org.htod.core.alloc.Heap;
import org.htod.core.container.ContainerConfig;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * Power loss at a random write or sync of a seeded workload of puts (new keys and replacements, small and
 * multi-sector values), removes, batches, clears, doublings of many batches and flushes of waiting
 * links (keys removed and put again between two flushes among them), for each storage method
 * (TS, PL, PFL) and each durability (SYNC: each write synced; ASYNC: synced every few operations,
 * as the store's background sync does; NONE: never synced but by the tables themselves). The write
 * at the cut is in flight (it may land whole, torn or not at all), a sync at the cut does not
 * happen, the device keeps a random subset of the unsynced writes and tears one, the store is
 * reopened on what survived, and then
 *
 * <ul>
 *   <li>the structural verifier passes, leak check included (recovery freed every leak);
 *   <li>every key holds a value it could hold: with SYNC, its value after the last operation that
 *       returned, or the one in flight; otherwise any value written since the last sync. Never
 *       another value, never garbage (CRCs are checked on every read);
 *   <li>iteration agrees with lookups and the size;
 *   <li>where the crash left a key twice in a chain (a remove and a put again of it between two
 *       flushes, of which the crash kept the new head link and lost the unlink), recovery kept the
 *       first entry, which a lookup in the crashed image finds, and the run meets that case.
 * </ul>
 *
 * Some points crash a second time, during the recovery of the first crash. The store is verified
 * after its reopen, not at the crash: a crashed store is not meant to verify. A failure names its
 * seed.
 */
class TableCrashTest {
    private static final int POINTS = 1200 * Integer.getInteger("htod.test.scale", 1);
    /** Three of each storage method and durability. */
    private static final int WORKLOADS = 27;
    /**
     * Crashes that leave a key twice in a chain, at the least: the every-write pass meets 17 and the
     * random one 5 (at scale 1); far fewer means the workloads no longer make the case.
     */
    private static final int MIN_STALE_EVERY_WRITE = 8;
    private static final int MIN_STALE_RANDOM = 2;
    /** Small, so that the entry cache evicts during the workloads. */
    private static final long CACHE = 32 << 10;

    /**
     * Doublings of many batches, and flushes of waiting links in the middle of the workloads; hash
     * keys from a fixed seed, so that a workload's writes, counted, and its crash points replay.
     */
    private static TableOptions opts(boolean syncEach, long cache) {
        return TableOptions.defaults().withSyncEachWrite(syncEach).withClock(() -> 0L).withCacheBytes(cache)
                .withMaxPendingLinks(24).withDoublingMinBatch(16).withHashKeySeed(0x5443_5254L);
    }

    /**
     * {@link #opts(boolean, long)} for {@code c}: its flushes write nearby bucket slots as one run,
     * or (odd workloads) every link alone, so that crashes also fall between the slots of a flush,
     * where a key removed and put again can be left twice in a chain.
     */
    private static TableOptions opts(Config c, long cache) {
        TableOptions o = opts(c.syncEach, cache);
        return c.workload % 2 == 1 ? o.withSlotRunBytes(0) : o;
    }

    private final Map<Integer, Long> writesOf = new HashMap<>();
    private int inDoubling;
    private int inRecovery;
    private int withStaleEntries;
    private int cutsInFlight;

    /** When writes are made durable; see the class comment. */
    enum Durability { SYNC, ASYNC, NONE }

    @Test
    void everySyncedEntrySurvivesPowerLoss() {
        for (int i = 0; i < POINTS; i++) {
            long seed = 0xC4A5_0000L + i;
            try {
                point(seed);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ": " + e, e);
            }
        }
        System.out.println(POINTS + " random crash points: " + inDoubling + " in a doubling, " + inRecovery
                + " crashed again in the recovery, " + withStaleEntries + " left a key twice in a chain");
        assertTrue(inDoubling >= POINTS / 20, "only " + inDoubling + " crashes fell in a doubling");
        assertTrue(inRecovery >= POINTS / 20, "only " + inRecovery + " crashes fell in a recovery");
        assertTrue(withStaleEntries >= MIN_STALE_RANDOM, "only " + withStaleEntries
                + " crashes left a key twice in a chain");
    }

    private static final class Config {
        final int workload;
        final Durability durability;
        final boolean syncEach;
        final StorageMethod method;
        final int ops;
        final int inserts;

        Config(int workload) {
            this(workload, 350 + new SplittableRandom(workload).nextInt(150), 150);
        }

        /** Workloads {@code 9i .. 9i+8} cover every storage method and durability once. */
        Config(int workload, int ops, int inserts) {
            this.workload = workload;
            this.durability = Durability.values()[workload % 3];
            this.syncEach = durability == Durability.SYNC;
            this.method = StorageMethod.values()[workload / 3 % 3];
            this.ops = ops;
            this.inserts = inserts;
        }

        @Override
        public String toString() {
            return "workload " + workload + " (" + method + ", " + durability + (workload % 2 == 1 ? ", links alone" : "")
                    + ")";
        }
    }

    /**
     * Small workloads, one per storage method and durability, crashed at every one of their writes
     * and syncs (twice, with other survivors, where writes wait for a sync): dense coverage of each step of the doublings they
     * make (64 to 128 to 256 buckets, in batches of 16) and of each link of the flushes.
     */
    @Test
    void powerLossAtEveryWriteOfSmallWorkloads() {
        int points = 0;
        Map<String, Integer> perConfig = new java.util.TreeMap<>();
        for (int w = 0; w < 9; w++) {
            Config c = new Config(108 + w, 130, 110);
            long total = countWrites(c);
            // Without a sync per write many writes are pending at each cut: a second set of survivors.
            int reps = c.syncEach ? 1 : 2;
            for (int k = 1; k <= total; k++) {
                for (int rep = 0; rep < reps; rep++) {
                    long seed = (long) w << 32 | (long) k << 1 | rep;
                    try {
                        point(c, k, seed, new SplittableRandom(seed));
                    } catch (Throwable e) {
                        throw new AssertionError(c + " k=" + k + " seed=" + seed + ": " + e, e);
                    }
                    points++;
                }
            }
            perConfig.put(c.method + "/" + c.durability, (int) total);
        }
        System.out.println(points + " crash points at every write and sync of 9 small workloads " + perConfig + ", "
                + cutsInFlight + " cut in a write that may land, " + withStaleEntries + " left a key twice in a chain");
        assertTrue(points >= 1000, "only " + points + " crash points");
        assertTrue(perConfig.size() == 9, "every storage method at every durability: " + perConfig.keySet());
        assertTrue(withStaleEntries >= MIN_STALE_EVERY_WRITE, "only " + withStaleEntries
                + " crashes left a key twice in a chain");
    }

    private static Storage create(BlockDevice dev, Config c) {
        return Storage.create(dev, ContainerConfig.builder().storageMethod(c.method).grain(64).logSize(0).build());
    }

    private void point(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Config c = new Config(r.nextInt(WORKLOADS));
        long total = writesOf.computeIfAbsent(c.workload, w -> countWrites(c));
        int k = 1 + r.nextInt((int) total);
        point(c, k, seed, r);
    }

    /** Power fails at the {@code k}-th write or sync from now: see the class comment. */
    private static void cutAt(CrashDevice dev, long k) {
        dev.armPowerCut(k, Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
    }

    private void point(Config c, int k, long seed, SplittableRandom r) {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        Model model = new Model(c.syncEach);
        TableStore ts = TableStore.open(create(dev, c), opts(c, CACHE));
        cutAt(dev, k);
        boolean crashed = false;
        try {
            workload(c, ts, model);
            ts.close();
        } catch (HtodException e) {
            // The device's own error, or the store's refusal of a later call once power is lost.
            if (!dev.powerCut()) {
                throw e;
            }
            crashed = true;
            if (inDoubling(e)) {
                inDoubling++;
            }
            if (!dev.cutAtSync()) {
                cutsInFlight++;
            }
        }
        dev.crash(seed);
        MemoryDevice after = disk.reopen();
        if (crashed && r.nextInt(4) == 0) {
            // Power fails again while the store recovers from the first failure.
            CrashDevice again = new CrashDevice(after);
            cutAt(again, 1 + r.nextInt(40));
            try {
                TableStore.open(Storage.open(again), opts(c, CACHE)).close();
            } catch (HtodException e) {
                if (!again.powerCut()) {
                    throw e;
                }
                inRecovery++;
            }
            again.crash(seed + 1);
            after = after.reopen();
        }
        MemoryDevice crashed0 = copy(after);
        TableStore reopened = TableStore.open(Storage.open(after), opts(c, CACHE));
        reopened.verify(true);
        HashtableOnDisk t = reopened.table("t", false);
        if (reopened.recovery() != null && reopened.recovery().staleEntriesUnlinked() > 0) {
            withStaleEntries++;
            firstEntriesKept(crashed0, model.keys(), t);
        }
        model.check(t);
        reopened.close();
    }

    /** A copy of a device's bytes, which the copy's own use leaves alone. */
    private static MemoryDevice copy(MemoryDevice from) {
        MemoryDevice to = new MemoryDevice();
        byte[] all = new byte[(int) from.size()];
        from.read(0, ByteBuffer.wrap(all));
        to.write(0, ByteBuffer.wrap(all));
        return to;
    }

    /**
     * Where recovery met a key twice in a chain, it must keep the first entry, the newer: the
     * value each key reads after recovery is the one a lookup, which stops at the first entry of
     * its key, reads in the crashed image before any recovery (keys that lookup misses, cut out of
     * their chains by an interrupted doubling, are adopted back by recovery and not compared).
     */
    private static void firstEntriesKept(MemoryDevice crashed, Set<String> keys, HashtableOnDisk recovered) {
        Storage s = Storage.open(crashed);
        Heap heap = s.heap();
        SyncGate gate = new SyncGate(heap, new EntryCache(0), 1 << 20, null);
        TableOptions o = opts(false, 0);
        HashtableOnDisk catalog = HashtableOnDisk.open(heap, gate, s.rootCatalog(), TableStore.CATALOG_NAME, o, false);
        StoredEntry header = catalog.get(TableStore.nameKey("t"));
        if (header == null) {
            throw new AssertionError("recovery met a key twice in a table the crashed catalog does not name");
        }
        HashtableOnDisk before = HashtableOnDisk.open(heap, gate, TableStore.headerOf(header.value(), "t", header.handle,
                heap), "t", o, false);
        for (String k : keys) {
            StoredEntry first = before.get(bytes(k));
            if (first != null) {
                StoredEntry kept = recovered.get(bytes(k));
                assertArrayEquals(first.value(), kept == null ? null : kept.value(), "key " + k
                        + ": recovery kept another entry than the first of its chain");
            }
        }
    }

    /** Whether the power cut, {@code e} or what it wraps, fell in a doubling. */
    private static boolean inDoubling(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            for (StackTraceElement f : t.getStackTrace()) {
                if (f.getClassName().equals(Doubler.class.getName())) {
                    return true;
                }
            }
        }
        return false;
    }

    private long countWrites(Config c) {
        CountingDevice dev = new CountingDevice(new MemoryDevice());
        TableStore ts = TableStore.open(create(dev, c), opts(c, CACHE));
        dev.reset();
        workload(c, ts, new Model(c.syncEach));
        ts.close();
        return dev.counts().writes() + dev.counts().syncs();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(SplittableRandom r, int op) {
        int len = r.nextInt(8) == 0 ? 600 + r.nextInt(1500) : 1 + r.nextInt(20);
        byte[] v = new byte[len];
        r.nextBytes(v);
        v[0] = (byte) op; // values differ from one write to the next
        return v;
    }

    /** The seeded workload; the table is created inside it, so that its creation can crash too. */
    static void workload(Config c, TableStore ts, Model model) {
        SplittableRandom r = new SplittableRandom(c.workload * 7919L);
        HashtableOnDisk t = ts.table("t", true);
        int keys = 500;
        for (int op = 0; op < c.ops; op++) {
            boolean insert = op < c.inserts;
            int kind = insert ? 0 : r.nextInt(100);
            byte[] key = bytes("key" + (insert ? op : r.nextInt(keys)));
            if (insert && op % 10 == 9) {
                // a batch of replacements of earlier keys and new keys: in NONE mode the replaced
                // entries wait to be freed when the doubling this batch may start begins
                List<byte[]> ks = new ArrayList<>();
                List<byte[]> vs = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    byte[] k = bytes("key" + (i < 3 ? r.nextInt(op) : op + 1000 * (i + 1)));
                    byte[] v = value(r, op);
                    ks.add(k);
                    vs.add(v);
                    model.begin(k, v);
                }
                t.putAll(ks, vs, 0);
            } else if (kind < 50) {
                byte[] v = value(r, op);
                model.begin(key, v);
                t.update(key, cur -> Change.put(v, 0));
            } else if (kind < 62) {
                model.begin(key, null);
                t.update(key, cur -> cur == null ? null : Change.REMOVE);
            } else if (kind < 70) {
                // removed, then put again before the next flush: the new entry goes to the head of
                // the chain while the removal's link may still be unwritten (recovery keeps the
                // first). A key that is there, so that the removal unlinks something.
                key = model.presentFrom(r.nextInt(keys), keys, key);
                model.begin(key, null);
                t.update(key, cur -> cur == null ? null : Change.REMOVE);
                model.done();
                byte[] v = value(r, op);
                model.begin(key, v);
                t.update(key, cur -> Change.put(v, 0));
            } else if (kind < 80) {
                byte[] v = value(r, op);
                model.beginIfPresent(key, v);
                t.update(key, cur -> cur == null ? null : Change.put(v, 0));
            } else if (kind < 92) {
                List<byte[]> ks = new ArrayList<>();
                List<byte[]> vs = new ArrayList<>();
                int n = 2 + r.nextInt(30);
                for (int i = 0; i < n; i++) {
                    byte[] k = bytes("key" + r.nextInt(keys));
                    byte[] v = value(r, op);
                    ks.add(k);
                    vs.add(v);
                    model.begin(k, v);
                }
                t.putAll(ks, vs, 0);
            } else if (kind < 93) {
                model.beginClear();
                t.clear();
            } else if (c.durability == Durability.ASYNC && kind < 98) {
                ts.sync();
                model.synced();
            }
            model.done();
        }
    }

    /**
     * What each key may hold after a crash. With syncEach, the value after the last completed
     * operation, plus what the operation in flight would write. Without, every value written since
     * the last sync.
     */
    static final class Model {
        private final boolean syncEach;
        private final Map<String, byte[]> current = new HashMap<>();
        private final Map<String, List<byte[]>> possible = new HashMap<>();
        private final Set<String> inFlight = new HashSet<>();
        private boolean clearing;

        Model(boolean syncEach) {
            this.syncEach = syncEach;
        }

        private static String k(byte[] key) {
            return new String(key, StandardCharsets.UTF_8);
        }

        private List<byte[]> possibleOf(String k) {
            return possible.computeIfAbsent(k, x -> {
                List<byte[]> l = new ArrayList<>();
                l.add(current.get(x));
                return l;
            });
        }

        void begin(byte[] key, byte[] value) {
            String k = k(key);
            possibleOf(k).add(value);
            current.put(k, value);
            inFlight.add(k);
        }

        /** The first key at or after {@code "key" + i} (cyclically among {@code keys}) that holds a value, else {@code otherwise}. */
        byte[] presentFrom(int i, int keys, byte[] otherwise) {
            for (int n = 0; n < keys; n++) {
                String k = "key" + (i + n) % keys;
                if (current.get(k) != null) {
                    return bytes(k);
                }
            }
            return otherwise;
        }

        /** Every key the workload has touched. */
        Set<String> keys() {
            Set<String> all = new HashSet<>(current.keySet());
            all.addAll(possible.keySet());
            return all;
        }

        void beginIfPresent(byte[] key, byte[] value) {
            if (current.get(k(key)) != null) {
                begin(key, value);
            }
        }

        void beginClear() {
            for (String k : new ArrayList<>(current.keySet())) {
                if (current.get(k) != null) {
                    begin(bytes(k), null);
                }
            }
            clearing = true;
        }

        /** The operation returned: with syncEach its effect is durable. */
        void done() {
            if (syncEach) {
                for (String k : inFlight) {
                    List<byte[]> l = new ArrayList<>();
                    l.add(current.get(k));
                    possible.put(k, l);
                }
            }
            inFlight.clear();
            clearing = false;
        }

        void synced() {
            possible.clear();
        }

        void check(HashtableOnDisk t) {
            Set<String> all = keys();
            long present = 0;
            for (String k : all) {
                List<byte[]> ok = possible.containsKey(k) ? possible.get(k) : java.util.Collections.singletonList(current.get(k));
                StoredEntry e = t == null ? null : t.get(bytes(k));
                byte[] found = e == null ? null : e.value();
                boolean match = false;
                for (byte[] v : ok) {
                    match |= Arrays.equals(v, found);
                }
                if (!match) {
                    throw new AssertionError("key " + k + " holds " + describe(found) + ", expected one of "
                            + ok.stream().map(Model::describe).toList());
                }
                if (found != null) {
                    present++;
                }
            }
            if (t == null) {
                return;
            }
            long iterated = 0;
            for (Iterator<StoredEntry> it = t.iterator(true); it.hasNext();) {
                StoredEntry e = it.next();
                StoredEntry again = t.get(e.key());
                if (again == null || !Arrays.equals(again.value(), e.value())) {
                    throw new AssertionError("iteration returned " + k(e.key()) + " which get does not");
                }
                iterated++;
            }
            if (iterated != present || t.size() != present) {
                throw new AssertionError(present + " keys present, iteration found " + iterated + ", size says "
                        + t.size());
            }
        }

        static String describe(byte[] v) {
            return v == null ? "nothing" : v.length + " bytes [" + (v[0] & 0xff) + ", ...]";
        }
    }
}
