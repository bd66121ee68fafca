package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.StorageMethod;
import org.htod.VerifyReport;
import org.htod.WriteBatch;
import org.htod.core.HtodException;
import org.htod.core.alloc.Heap;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.htod.table.PlacedEntries;
import org.htod.table.TableHash;
import org.htod.testkit.Threads;
import org.junit.jupiter.api.Test;

/**
 * Placed values end to end under power cuts and failed writes: writers put values on both
 * sides of {@code placeValuesFrom} (so a key's value goes from placed to carried in the log and
 * back), remove keys, write {@code putAll}s and {@code WriteBatch}es (whose values are never
 * placed) and take checkpoints, while a power cut is armed at a random write or sync (the placed
 * value's own write, the sync before its record, the record's frames, an install, a checkpoint,
 * the close, or the recovery that opens the store) and, in some rounds, a write or sync fails
 * (once, or from then on, as a full disk). Most chains run at SYNC; the others at NONE, where a
 * write is durable once a later {@code sync()} of its writer returns, and replaced blocks wait
 * for that.
 *
 * <p>Each chain runs one store through many rounds. After each, a copy of what the crash left is
 * recovered and checked: every key holds its last acknowledged value or that of an operation that
 * did not return (exactly: a value is its writer's, numbered, so a half-written one shows), an
 * interrupted batch shows all or nothing, the store verifies (every allocated block is reached by
 * a table, is a checkpoint's, or is unrecorded), and every unrecorded block is the block of a
 * buffered placed value, which holds exactly that value: no block of a record that never landed,
 * or that a later change replaced, stays allocated, and none is given back while a value still
 * needs it. The next round opens the original, recovering it again, and must find what the copy
 * held. Rounds without a cut also check the running store before it closes (synced at NONE or
 * after faults): every unrecorded block is a buffered value's, and holds it, but after faults,
 * where the blocks of failed puts whose records the log cannot tell dropped are held until a
 * reopen (counted). A failure names the seed, round and phase of the cut;
 * {@code -Dhtod.test.scale=N} runs N times as many chains, {@code -DargLine=-Dhtod.test.seed=S} other seeds.
 */
class PlacedValuesCrashTest {
    private static final long LOG = LoggedOpen.MIN_LOG;
    /** Values of at least this many bytes are placed. */
    private static final int PLACE = 256;
    private static final int WRITERS = 3;
    /** Keys of each writer: few, so that a key changes again before its install, and often while it is installed. */
    private static final int KEYS = 6;
    private static final int OPS = 60;
    /** Failures in a row after which a writer takes the store to refuse changes, and stops. */
    private static final int REFUSED = 6;
    private static final String ABSENT = "(absent)";

    @Test
    void placedValuesSurvivePowerCutsAndFailedWritesWithoutLeaks() {
        int chains = 8 * LogStores.scale();
        int rounds = 40;
        long base = Long.getLong("htod.test.seed", 0x91ACEDL);
        Map<String, Integer> tally = new TreeMap<>();
        for (int c = 0; c < chains; c++) {
            long seed = base + c;
            Chain chain = new Chain(seed, tally);
            try {
                tally.merge("chains at " + chain.durability, 1, Integer::sum);
                chain.run(rounds);
                tally.merge("most KiB allocated after a recovery", (int) (chain.maxAllocated >> 10), Math::max);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ", " + chain.method + ", round " + chain.round + " ("
                        + chain.what + ", cut in " + chain.phase + "): " + e, e);
            }
        }
        System.out.println("PlacedValuesCrashTest: " + chains + " chains of " + rounds + " rounds: " + tally);
        assertTrue(tally.getOrDefault("cuts", 0) >= chains * rounds / 2, "power cuts: " + tally);
        for (String p : new String[] {"placed write", "log sync", "log frames", "install", "checkpoint", "close",
                "recovery"}) {
            assertTrue(tally.getOrDefault("cut in " + p, 0) >= chains / 8, "cuts in " + p + ": " + tally);
        }
        assertTrue(tally.getOrDefault("chains at NONE", 0) > 0 && tally.getOrDefault("chains at SYNC", 0) > 0,
                "durabilities: " + tally);
        assertTrue(tally.getOrDefault("failed operations", 0) >= chains * 10, "faults met: " + tally);
        assertTrue(tally.getOrDefault("placed values recovered", 0) >= chains * 10, "recoveries of placed values: "
                + tally);
        // Some 20 KiB of values live, the buffer's placed values, the tables and a checkpoint: a
        // leak that the checks above let through would grow this round after round.
        assertTrue(tally.get("most KiB allocated after a recovery") < 512, "heap allocated: " + tally);
        assertTrue(tally.getOrDefault("running stores checked", 0) >= chains * 5, "running stores checked: " + tally);
    }

    static Htod.Builder builder(BlockDevice dev, StorageMethod method, Durability durability, int installBatch) {
        Htod.Builder b = Htod.builder(dev).storageMethod(method).grain(64).logSize(LOG).bufferSize(64 << 10)
                .durability(durability).loadFactor(0.5).cacheSize(16 << 10).placeValuesFrom(PLACE);
        return LayerAccess.doublingMinBatch(LayerAccess.installBatch(b, installBatch), 8);
    }

    /** What each writer's keys may hold: its own keys, so the writers never share a model. */
    private static final class Model {
        final Map<String, String> acked = new HashMap<>();
        /** Keys written by an operation that did not return: any of these since their last acknowledgement. */
        final Map<String, Set<String>> since = new HashMap<>();
        /**
         * At NONE, keys written by an operation that returned since the last sync: what each reads
         * now ({@code null}: removed), and holds once a sync returns.
         */
        final Map<String, String> returned = new HashMap<>();
        /**
         * The last batch not known durable (at SYNC one that did not return, at NONE one not
         * synced yet), while none of its keys was written again: new state by key.
         */
        Map<String, String> openBatch;

        void begin(String k, String v) {
            since.computeIfAbsent(k, x -> new HashSet<>(Set.of(acked.getOrDefault(x, ABSENT)))).add(v == null ? ABSENT : v);
            if (openBatch != null && openBatch.containsKey(k)) {
                openBatch = null;
            }
        }

        void acked(String k, String v) {
            since.remove(k); // a later record of the key, durable: no earlier one can be its last
            if (v == null) {
                acked.remove(k);
            } else {
                acked.put(k, v);
            }
        }

        /** At NONE: the operation returned; durable once a sync does. */
        void returned(String k, String v) {
            returned.put(k, v);
        }

        /** An operation failed: its keys may hold its value or not until written again. */
        void failed(String k) {
            returned.remove(k);
        }

        /** At NONE, a sync returned: what each key's last returned operation left is durable. */
        void synced() {
            returned.forEach(this::acked);
            returned.clear();
            openBatch = null;
        }

        /** Whether the running store may read {@code found} for {@code k}: at NONE a returned write's value exactly. */
        boolean allowsRead(String k, String found) {
            return returned.containsKey(k) ? java.util.Objects.equals(returned.get(k), found) : allows(k, found);
        }

        boolean allows(String k, String found) {
            String f = found == null ? ABSENT : found;
            Set<String> s = since.get(k);
            return s != null ? s.contains(f) : f.equals(acked.getOrDefault(k, ABSENT));
        }

        /** Settles every key on what a recovery found. */
        void settle(Map<String, String> found) {
            acked.clear();
            acked.putAll(found);
            since.clear();
            returned.clear();
            openBatch = null;
        }
    }

    /** Tells which part of the store a power cut fell in, from the stack of the call that met it. */
    private static final class Tracer extends ForwardingDevice {
        final CrashDevice crash;
        volatile String phase;
        volatile boolean opening;
        volatile boolean closing;

        Tracer(CrashDevice crash) {
            super(crash);
            this.crash = crash;
        }

        /** Placed values' writes to let through before the power is cut at one (0: no such cut). */
        final java.util.concurrent.atomic.AtomicInteger placedWritesBeforeCut = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public void write(long pos, ByteBuffer src) {
            if (placedWritesBeforeCut.get() > 0 && inPlacedWrite() && placedWritesBeforeCut.decrementAndGet() == 0) {
                crash.armPowerCut(1, Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
            }
            try {
                super.write(pos, src);
            } catch (SimulatedCrashException e) {
                cut(false);
                throw e;
            }
        }

        @Override
        public void writeDurable(long pos, ByteBuffer src) {
            try {
                crash.writeDurable(pos, src);
            } catch (SimulatedCrashException e) {
                cut(false);
                throw e;
            }
        }

        @Override
        public void sync() {
            try {
                super.sync();
            } catch (SimulatedCrashException e) {
                cut(true);
                throw e;
            }
        }

        private static boolean inPlacedWrite() {
            for (StackTraceElement e : Thread.currentThread().getStackTrace()) {
                if (e.getClassName().equals(Heap.class.getName()) && e.getMethodName().equals("allocateUnrecorded")) {
                    return true;
                }
            }
            return false;
        }

        private synchronized void cut(boolean atSync) {
            if (phase == null && crash.powerCut()) {
                phase = opening ? "recovery" : closing ? "close" : classify(atSync);
            }
        }

        private static String classify(boolean atSync) {
            for (StackTraceElement e : Thread.currentThread().getStackTrace()) {
                String c = e.getClassName();
                String m = e.getMethodName();
                if (c.equals(Heap.class.getName()) && m.equals("allocateUnrecorded")) {
                    return "placed write";
                }
                if (m.equals("heal")) {
                    return "heal";
                }
                if (m.equals("writeTaken")) {
                    return atSync ? "log sync" : "log frames";
                }
                if (c.equals(Installs.class.getName()) && m.startsWith("checkpoint")) {
                    return "checkpoint";
                }
                if (c.equals(Installs.class.getName()) && m.equals("install")) {
                    return "install";
                }
            }
            return "other";
        }
    }

    /** One store through a sequence of rounds. */
    private static final class Chain {
        final long seed;
        final SplittableRandom r;
        final Map<String, Integer> tally;
        final StorageMethod method;
        /** SYNC, or NONE where a write is durable once a later sync returns. */
        final Durability durability;
        final int installBatch;
        final MemoryDevice disk = new MemoryDevice();
        final Model[] models = new Model[WRITERS];
        /** What the store holds, as the last recovery found it: the next open must find the same. */
        Map<String, String> base = new TreeMap<>();
        int round;
        String what = "";
        String phase;
        /** Most heap bytes allocated after a recovery: what is live, buffered and the tables' own. */
        long maxAllocated;

        Chain(long seed, Map<String, Integer> tally) {
            this.seed = seed;
            this.r = new SplittableRandom(seed);
            this.tally = tally;
            this.method = StorageMethod.values()[(int) Math.floorMod(seed, 3L)];
            this.installBatch = 4 + r.nextInt(40);
            this.durability = r.nextInt(3) == 0 ? Durability.NONE : Durability.SYNC;
            for (int w = 0; w < WRITERS; w++) {
                models[w] = new Model();
            }
        }

        void count(String what, int n) {
            tally.merge(what, n, Integer::sum);
        }

        void run(int rounds) {
            for (round = 0; round < rounds; round++) {
                phase = null;
                round();
            }
        }

        void round() {
            CrashDevice crash = new CrashDevice(disk.reopen());
            Tracer tracer = new Tracer(crash);
            FaultyDevice faults = new FaultyDevice(tracer);
            boolean cutInRecovery = round > 0 && r.nextInt(6) == 0;
            if (cutInRecovery) {
                crash.armPowerCut(1 + r.nextInt(30), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
            }
            HtodStore store = null;
            what = "open";
            tracer.opening = true;
            try {
                store = LayerAccess.hashKeySeed(builder(faults, method, durability, installBatch), seed).open();
                tracer.opening = false;
                what = "contents after the open";
                assertEquals(base, contents(store), "the second recovery of what the last one found");
                HtodMap<String, String> m = store.map("m", Codec.string(), Codec.string()); // made before any fault
                if (!cutInRecovery && r.nextInt(5) == 0) {
                    tracer.placedWritesBeforeCut.set(1 + r.nextInt(40)); // the cut falls on a placed value's own write
                } else if (!cutInRecovery) {
                    crash.armPowerCut(1 + r.nextInt(700), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
                }
                boolean faulted = r.nextInt(3) == 0;
                if (faulted) {
                    armFault(faults);
                }
                workload(store, m);
                boolean fault = faults.faultsRaised() > 0;
                faults.heal();
                if (!crash.powerCut()) {
                    what = fault ? "the running store after faults" : "the running store";
                    checkRunning(store, fault);
                }
                if (!crash.powerCut() && r.nextInt(3) != 0) {
                    what = "close";
                    tracer.closing = true;
                    if (r.nextBoolean()) {
                        crash.armPowerCut(1 + r.nextInt(12), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
                    }
                    store.close();
                    count("clean closes", 1);
                }
            } catch (HtodException e) {
                if (!LogStores.causedByPowerCut(e)) {
                    throw e;
                }
            }
            phase = tracer.phase;
            if (crash.powerCut()) {
                count("cuts", 1);
                count("cut in " + phase, 1);
            }
            crash.crash(r.nextLong());
            LogStores.closeQuietly(store);
            recoverACopy();
        }

        /** Arms one failure: a write or a sync, once or from then on (a full disk), some writes landing in part. */
        void armFault(FaultyDevice faults) {
            int n = 1 + r.nextInt(300);
            switch (r.nextInt(5)) {
                case 0 -> faults.failSync(1 + r.nextInt(20), FaultyDevice.Fault.IO_ERROR, false);
                case 1 -> faults.failWrite(n, FaultyDevice.Fault.DISK_FULL, true);
                case 2 -> faults.failWriteAfter(n, 512);
                case 3 -> faults.failSync(1 + r.nextInt(20), FaultyDevice.Fault.IO_ERROR, true);
                default -> faults.failWrite(n, FaultyDevice.Fault.IO_ERROR, false);
            }
        }

        /** The writers' threads, until the cut, their operations' end, or a store that refuses every change. */
        void workload(HtodStore store, HtodMap<String, String> m) {
            AtomicBoolean stop = new AtomicBoolean();
            Throwable[] errors = new Throwable[WRITERS];
            int[] failed = new int[WRITERS];
            Thread[] threads = new Thread[WRITERS];
            for (int w = 0; w < WRITERS; w++) {
                int id = w;
                SplittableRandom wr = r.split();
                threads[w] = new Thread(() -> {
                    try {
                        failed[id] = write(store, m, id, wr, stop);
                    } catch (Throwable e) {
                        errors[id] = e;
                        stop.set(true);
                    }
                }, "writer-" + w);
                threads[w].start();
            }
            Threads.joinOrFail(threads);
            for (int w = 0; w < WRITERS; w++) {
                if (errors[w] != null) {
                    throw new AssertionError("writer " + w + ": " + errors[w], errors[w]);
                }
                count("failed operations", failed[w]);
            }
        }

        /** Writer {@code w}'s operations on its own keys; returns how many failed without a power cut. */
        int write(HtodStore store, HtodMap<String, String> m, int w, SplittableRandom wr, AtomicBoolean stop) {
            Model model = models[w];
            int failures = 0;
            int inARow = 0;
            for (int op = 0; op < OPS && !stop.get(); op++) {
                String tag = "w" + w + "." + round + "." + op;
                Map<String, String> writes = new LinkedHashMap<>();
                int kind = wr.nextInt(100);
                boolean batch = kind >= 55 && kind < 70;
                try {
                    if (kind < 40) {
                        String k = key(w, wr);
                        String v = value(tag, wr);
                        writes.put(k, v);
                        model.begin(k, v);
                        m.put(k, v);
                    } else if (kind < 50) {
                        String k = key(w, wr);
                        writes.put(k, null);
                        model.begin(k, null);
                        m.delete(k);
                    } else if (kind < 55) {
                        for (int i = 0; i < 2; i++) {
                            writes.put(key(w, wr), value(tag + "p" + i, wr));
                        }
                        writes.forEach(model::begin);
                        m.putAll(writes);
                    } else if (batch) {
                        boolean settled = true;
                        for (int i = 0, n = 2 + wr.nextInt(3); i < n; i++) {
                            String k = key(w, wr);
                            writes.put(k, wr.nextInt(4) == 0 ? null : value(tag + "b" + i, wr));
                        }
                        Map<String, String> changes = new HashMap<>();
                        for (Map.Entry<String, String> e : writes.entrySet()) {
                            settled &= !model.since.containsKey(e.getKey());
                            String now = model.acked.getOrDefault(e.getKey(), ABSENT);
                            String then = e.getValue() == null ? ABSENT : e.getValue();
                            if (!now.equals(then)) {
                                changes.put(e.getKey(), then);
                            }
                        }
                        writes.forEach(model::begin);
                        model.openBatch = settled && changes.size() > 1 ? changes : null;
                        try (WriteBatch b = store.batch()) {
                            writes.forEach((k, v) -> {
                                if (v == null) {
                                    b.remove(m, k);
                                } else {
                                    b.put(m, k, v);
                                }
                            });
                            b.commit();
                        }
                        if (durability == Durability.SYNC) {
                            model.openBatch = null;
                        }
                    } else if (kind < 95) {
                        String k = key(w, wr);
                        String v = m.get(k);
                        if (!model.allowsRead(k, v)) {
                            throw new AssertionError(k + " reads " + v + ", acknowledged " + model.acked.get(k)
                                    + ", or one of " + model.since.get(k) + ", returned " + model.returned);
                        }
                    } else if (kind < 97) {
                        store.checkpoint();
                    } else {
                        store.sync();
                        model.synced();
                    }
                    writes.forEach(durability == Durability.SYNC ? model::acked : model::returned);
                    inARow = 0;
                } catch (HtodException e) {
                    if (LogStores.causedByPowerCut(e)) {
                        return failures;
                    }
                    writes.keySet().forEach(model::failed);
                    failures++;
                    if (++inARow >= REFUSED) {
                        return failures;
                    }
                }
            }
            return failures;
        }

        String key(int w, SplittableRandom wr) {
            return "w" + w + "k" + wr.nextInt(KEYS);
        }

        /** A value of {@code tag} on either side of {@link #PLACE}: at its edge, well below, or well above. */
        static String value(String tag, SplittableRandom wr) {
            int len = switch (wr.nextInt(3)) {
                case 0 -> PLACE - 2 + wr.nextInt(4);
                case 1 -> 4 + wr.nextInt(PLACE / 2);
                default -> PLACE + wr.nextInt(8 * PLACE);
            };
            StringBuilder b = new StringBuilder(len).append(tag).append(':');
            while (b.length() < len) {
                b.append((char) ('a' + (b.length() * 7 + tag.length()) % 26));
            }
            return b.toString();
        }

        /** Opens a copy of what the crash left, checks it, and makes what it found the chain's base. */
        void recoverACopy() {
            MemoryDevice copy = LogStores.copy(disk);
            what = "recovery of a copy";
            try (HtodStore s = LayerAccess.hashKeySeed(builder(copy, method, durability, installBatch), seed).open()) {
                Map<String, String> found = contents(s);
                what = "the recovered contents";
                for (int w = 0; w < WRITERS; w++) {
                    Model model = models[w];
                    for (int i = 0; i < KEYS; i++) {
                        String k = "w" + w + "k" + i;
                        if (!model.allows(k, found.get(k))) {
                            throw new AssertionError(k + " holds " + found.get(k) + ", acknowledged " + model.acked.get(k)
                                    + (model.since.containsKey(k) ? ", or one of " + model.since.get(k) : ""));
                        }
                    }
                    if (model.openBatch != null) {
                        int shown = 0;
                        for (Map.Entry<String, String> e : model.openBatch.entrySet()) {
                            shown += e.getValue().equals(found.getOrDefault(e.getKey(), ABSENT)) ? 1 : 0;
                        }
                        assertTrue(shown == 0 || shown == model.openBatch.size(), "the interrupted batch "
                                + model.openBatch + " shows in part: " + found);
                    }
                }
                what = "the recovered store's blocks";
                count("placed values recovered", placedRead(s));
                org.htod.StoreStats.Space space = s.stats().space();
                maxAllocated = Math.max(maxAllocated, space.allocatedBytes());
                checkBlocks(s, "recovered");
                for (int w = 0; w < WRITERS; w++) {
                    Map<String, String> own = new HashMap<>();
                    String prefix = "w" + w + "k";
                    found.forEach((k, v) -> {
                        if (k.startsWith(prefix)) {
                            own.put(k, v);
                        }
                    });
                    models[w].settle(own);
                }
                base = new TreeMap<>(found);
            }
        }

        /** Placed values the last recovery read back from their blocks. */
        static int placedRead(HtodStore s) {
            return (int) LogStores.layer(s).mob.all().stream().filter(p -> p.current.placed() != 0).count();
        }

        /** The running store, its writers done: its placed blocks and unrecorded ones. */
        void checkRunning(HtodStore s, boolean fault) {
            if (fault || durability != Durability.SYNC) {
                try {
                    s.sync(); // heals the log, if it can, after which the blocks of records it dropped go back
                } catch (HtodException e) {
                    count("stores refusing changes after a fault", 1);
                    return;
                }
                LogStores.layer(s).installs.replaced.releaseDurable();
            }
            checkBlocks(s, fault ? "running after faults" : "running at " + durability);
            count("running stores checked", 1);
        }

        /**
         * The store verifies; every buffered placed value's block is allocated and holds exactly
         * that value, and no two share one; and every unrecorded block is one of those, but in a
         * store running after faults, which may hold the blocks of failed puts until it reopens
         * (where the log cannot tell whether their records were dropped). At SYNC, with the
         * writers done and no fault met, no replaced block waits: each replacing record was
         * durable when its write returned.
         */
        void checkBlocks(HtodStore s, String state) {
            WriteLayer layer = LogStores.layer(s);
            boolean afterFaults = state.equals("running after faults");
            if (!afterFaults) {
                assertEquals(0, layer.installs.replaced.waiting(), "replaced blocks still held, every record"
                        + " durable (" + state + ")");
            }
            ReentrantLock install = layer.installLock(); // the flusher's installs record blocks: none meanwhile
            install.lock();
            try {
                VerifyReport report = s.verify();
                assertTrue(report.ok(), "the store does not verify: " + report);
                Heap heap = layer.heap;
                Set<Long> held = new HashSet<>();
                int unrecordedHeld = 0;
                for (Mob.Pending p : layer.mob.all()) {
                    Mob.Value v = p.current;
                    if (v.placed() == 0) {
                        continue;
                    }
                    String key = new String(p.key, StandardCharsets.UTF_8);
                    assertTrue(held.add(v.placed()), key + "'s block is another buffered value's too");
                    TableHash hashing = layer.tables().maps().stream().filter(t -> t.tableId() == p.tableId)
                            .findFirst().orElseThrow().hashing();
                    byte[] in = PlacedEntries.valueIfIntact(heap, v.placed(), p.tableId, hashing, p.key, v.version(), v.expiry(),
                            v.placedHeadCrc(), v.value().length);
                    assertTrue(in != null && java.util.Arrays.equals(in, v.value()), key + "'s placed block at offset "
                            + heap.address(v.placed()) + " no longer holds its value");
                    if (heap.unrecorded().contains(v.placed())) {
                        unrecordedHeld++;
                    }
                }
                int unrecorded = heap.unrecorded().count();
                if (afterFaults) {
                    count("unrecorded blocks of failed puts held until a reopen", unrecorded - unrecordedHeld);
                } else {
                    assertEquals(unrecordedHeld, unrecorded, "unrecorded blocks that no buffered value holds (" + state + ")");
                }
                long accounted = report.blocksAllocated() - report.blocksReached();
                assertTrue(accounted >= unrecorded && accounted <= unrecorded + 2, "allocated blocks no table reaches: "
                        + accounted + ", of which " + unrecorded + " unrecorded: " + report);
            } finally {
                install.unlock();
            }
        }

        static Map<String, String> contents(HtodStore s) {
            Map<String, String> out = new TreeMap<>();
            for (Map.Entry<String, String> e : LogStores.content(s).getOrDefault("m", Map.of()).entrySet()) {
                String v = e.getValue();
                out.put(e.getKey(), v.substring(0, v.lastIndexOf('@')));
            }
            return out;
        }
    }
}
