package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.htod.core.HtodException;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.FileDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process that writes (puts, removes, batches over three maps) at durability SYNC while it
 * compacts its store online and copies it, again and again, SIGKILLed at a seeded moment: the
 * next open holds every acknowledged write, no batch partly, verifies, and has deleted what an
 * interrupted compaction left; a copy that was published is whole. Then, in this process, a
 * write or sync of the new file fails at a seeded point while writers run: a typed exception,
 * and the store goes on with every write. {@code -Dhtod.test.seed} replays, {@code
 * -Dhtod.test.scale} runs more rounds.
 */
class CompactionKillTest {
    private static final String[] MAPS = {"a", "b", "c"};
    private static final int THREADS = 3;
    private static final int KEYS = 3000;
    private static final int ROUNDS = 3 * Integer.getInteger("htod.test.scale", 1);

    @TempDir
    Path dir;
    /** Kills that left a compaction's file, for the next open to delete; fault rounds whose compaction failed. */
    private int leftFiles;
    private int failures;

    /** A thread's operation: 0 put, 1 remove, 2 a batch putting one value under its batch key in every map. */
    record Op(int kind, String key, String value) {}

    static Op op(SplittableRandom r, int round, int thread, long n) {
        int kind = r.nextInt(5) < 3 ? 0 : r.nextInt(2) + 1;
        String key = kind == 2 ? "t" + thread + "-batch" : "t" + thread + "-" + r.nextInt(KEYS);
        return new Op(kind, key, "r" + round + "t" + thread + "n" + n + "-" + "x".repeat(r.nextInt(kind == 0 ? 600 : 30)));
    }

    static SplittableRandom ops(long seed, int round, int thread) {
        return new SplittableRandom(seed ^ (round * 0x9E3779B97F4A7C15L) ^ (thread * 0xC2B2AE3D27D4EB4FL));
    }

    /** The map an operation of kind put or remove runs on. */
    static String mapOf(Op o) {
        return MAPS[Math.floorMod(o.key().hashCode(), MAPS.length)];
    }

    @Test
    void everyAcknowledgedWriteSurvivesAKillDuringACompaction() throws Exception {
        long seed = Long.getLong("htod.test.seed", System.nanoTime());
        Path file = dir.resolve("store.htod");
        try (HtodStore s = Htod.builder(file).logSize(1 << 20).durability(Durability.SYNC).open()) {
            for (String m : MAPS) {
                s.map(m, Codec.string(), Codec.string());
            }
        }
        Map<String, String> model = new HashMap<>(); // "map/key" -> value
        int compactions = 0;
        int copies = 0;
        try {
            for (int round = 0; round < ROUNDS; round++) {
                int[] done = round(seed, round, file, model);
                compactions += done[0];
                copies += done[1];
            }
            faults(seed, file, model);
        } catch (Throwable e) {
            throw new AssertionError("seed=" + seed + ": " + e, e);
        }
        System.out.println("CompactionKillTest seed=" + seed + ": " + ROUNDS + " kills (" + leftFiles
                + " left a compaction's file), " + compactions + " compactions and " + copies
                + " copies finished before them; " + failures + " of " + ROUNDS + " compactions with a failing write or sync failed");
    }

    private int[] round(long seed, int round, Path file, Map<String, String> model) throws Exception {
        SplittableRandom r = new SplittableRandom(seed + round);
        // Killed after a seeded number of compactions and copies finished, then of acknowledgements:
        // in a compaction's copy, its rounds, its swap, or a copy's.
        int finished = r.nextInt(3); // a copy, a compaction
        int killAfter = r.nextInt(500); // few: a write the swap lost is not written again before the kill
        Path out = dir.resolve("child.out");
        Path err = dir.resolve("child.err");
        Process p = KillChild.start(Child.class, 96, out, err, file.toString(), Long.toString(seed),
                Integer.toString(round));
        try {
            long deadline = System.nanoTime() + 120_000_000_000L; // a hang guard
            while (count(lines(out), "compacted", "copied") < finished) {
                assertTrue(p.isAlive(), () -> "the child ended by itself: " + read(err));
                assertTrue(System.nanoTime() < deadline, "the child said too little");
                Thread.sleep(5);
            }
            int start = lines(out).size();
            while (lines(out).size() < start + killAfter) {
                assertTrue(p.isAlive(), () -> "the child ended by itself: " + read(err));
                assertTrue(System.nanoTime() < deadline, "the child said too little");
                Thread.sleep(5);
            }
            p.destroyForcibly();
            assertEquals(137, p.waitFor(), () -> "killed; stderr: " + read(err));
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor();
            }
        }
        long[] acked = new long[THREADS];
        java.util.Arrays.fill(acked, -1);
        int[] done = new int[2];
        List<String> published = new ArrayList<>();
        for (String l : lines(out)) {
            String[] w = l.split(" ");
            if (w.length != 3 || !w[2].equals(".")) {
                continue; // torn by the kill
            }
            switch (w[0]) {
                case "compacted" -> done[0]++;
                case "copied" -> {
                    done[1]++;
                    published.add(w[1]);
                }
                default -> acked[Integer.parseInt(w[0])] = Long.parseLong(w[1]);
            }
        }
        // every thread's acknowledged operations, and the one it had in flight: applied or not
        Map<String, String> inFlight = new HashMap<>();
        for (int t = 0; t < THREADS; t++) {
            SplittableRandom g = ops(seed, round, t);
            for (long n = 0; n <= acked[t]; n++) {
                apply(op(g, round, t, n), model);
            }
            Map<String, String> after = new HashMap<>(model);
            apply(op(g, round, t, acked[t] + 1), after);
            after.forEach((k, v) -> {
                if (!v.equals(model.get(k))) {
                    inFlight.put(k, v);
                }
            });
            model.forEach((k, v) -> {
                if (!after.containsKey(k)) {
                    inFlight.put(k, null);
                }
            });
        }
        leftFiles += partials(file).isEmpty() ? 0 : 1;
        try (HtodStore s = Htod.builder(file).durability(Durability.SYNC).createIfMissing(false).open()) {
            assertTrue(partials(file).isEmpty(), () -> "left after open: " + partials(file));
            VerifyReport v = s.verify();
            assertTrue(v.ok(), v::toString);
            Map<String, String> found = contents(s);
            for (String k : union(model, found, inFlight)) {
                String got = found.get(k);
                boolean ok = java.util.Objects.equals(got, model.get(k))
                        || inFlight.containsKey(k) && java.util.Objects.equals(got, inFlight.get(k));
                assertTrue(ok, "round " + round + ": " + k + " holds " + brief(got) + ", acknowledged " + brief(model.get(k))
                        + (inFlight.containsKey(k) ? " (in flight " + brief(inFlight.get(k)) + ")" : ""));
            }
            assertBatchesWhole(found, "round " + round);
            model.clear();
            model.putAll(found);
        }
        for (String c : published) {
            try (HtodStore s = Htod.builder(Path.of(c)).createIfMissing(false).open()) {
                VerifyReport v = s.verify();
                assertTrue(v.ok(), v::toString);
                assertBatchesWhole(contents(s), "copy " + c);
            }
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith("copy")).toList()) {
                Files.delete(f); // copies, and what an interrupted copy left: the copy's business, not the store's
            }
        }
        return done;
    }

    /** A write or a sync of the new file fails at a seeded point while writers run: typed, and nothing is lost. */
    private void faults(long seed, Path file, Map<String, String> model) throws Exception {
        SplittableRandom r = new SplittableRandom(seed * 31);
        try (HtodStore s = Htod.builder(file).durability(Durability.SYNC).createIfMissing(false).open()) {
            for (int round = 0; round < ROUNDS; round++) {
                boolean sync = r.nextBoolean();
                int at = 1 + r.nextInt(sync ? 6 : 300); // the new store syncs little: it is written at durability NONE
                FaultyDevice.Fault fault = r.nextBoolean() ? FaultyDevice.Fault.IO_ERROR : FaultyDevice.Fault.DISK_FULL;
                Map<String, String> mine = new java.util.concurrent.ConcurrentHashMap<>(model);
                java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
                List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
                List<Thread> writers = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    int fr = round;
                    writers.add(new Thread(() -> {
                        SplittableRandom g = ops(seed, 1000 + fr, thread);
                        try {
                            for (long n = 0; !stop.get(); n++) {
                                Op o = op(g, 1000 + fr, thread, n);
                                run(s, o);
                                apply(o, mine);
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    }));
                }
                writers.forEach(Thread::start);
                boolean failed = false;
                try {
                    s.compact(Progress.NONE, p -> {
                        FaultyDevice d = new FaultyDevice(FileDevice.open(p));
                        if (sync) {
                            d.failSync(at, fault, false);
                        } else {
                            d.failWrite(at, fault, false);
                        }
                        return d;
                    });
                } catch (HtodException e) {
                    failed = true;
                    failures++;
                } finally {
                    stop.set(true);
                    for (Thread w : writers) {
                        w.join();
                    }
                }
                assertTrue(errors.isEmpty(), () -> "writers: " + errors);
                if (failed) {
                    assertTrue(partials(file).isEmpty(), () -> "left after a failed compaction: " + partials(file));
                }
                assertEquals(new HashMap<>(mine), contents(s), "fault round " + round + " (failed " + failed + ")");
                model.clear();
                model.putAll(mine);
                s.map("a", Codec.string(), Codec.string()).put("still", "writable" + round);
                model.put("a/still", "writable" + round);
            }
            VerifyReport v = s.verify();
            assertTrue(v.ok(), v::toString);
        }
        try (HtodStore s = Htod.builder(file).createIfMissing(false).open()) {
            assertEquals(model, contents(s), "after reopen");
        }
    }

    private static void assertBatchesWhole(Map<String, String> found, String where) {
        for (int t = 0; t < THREADS; t++) {
            String a = found.get("a/t" + t + "-batch");
            for (String m : MAPS) {
                assertEquals(a, found.get(m + "/t" + t + "-batch"), where + ": batch of thread " + t + " partly visible");
            }
        }
    }

    static void apply(Op o, Map<String, String> model) {
        switch (o.kind()) {
            case 0 -> model.put(mapOf(o) + "/" + o.key(), o.value());
            case 1 -> model.remove(mapOf(o) + "/" + o.key());
            default -> {
                for (String m : MAPS) {
                    model.put(m + "/" + o.key(), o.value());
                }
            }
        }
    }

    static void run(HtodStore s, Op o) {
        switch (o.kind()) {
            case 0 -> s.map(mapOf(o), Codec.string(), Codec.string()).put(o.key(), o.value());
            case 1 -> s.map(mapOf(o), Codec.string(), Codec.string()).remove(o.key());
            default -> {
                try (WriteBatch b = s.batch()) {
                    for (String m : MAPS) {
                        b.put(s.map(m, Codec.string(), Codec.string()), o.key(), o.value());
                    }
                    b.commit();
                }
            }
        }
    }

    private static Map<String, String> contents(HtodStore s) {
        Map<String, String> all = new HashMap<>();
        for (String m : MAPS) {
            HtodMap<String, String> map = s.map(m, Codec.string(), Codec.string());
            for (String k : new ArrayList<>(map.keySet())) {
                all.put(m + "/" + k, map.get(k));
            }
        }
        return all;
    }

    private static java.util.Set<String> union(Map<String, String> a, Map<String, String> b, Map<String, String> c) {
        java.util.Set<String> u = new java.util.TreeSet<>(a.keySet());
        u.addAll(b.keySet());
        u.addAll(c.keySet());
        return u;
    }

    private static String brief(String v) {
        return v == null ? "nothing" : v.substring(0, v.indexOf('-'));
    }

    private List<Path> partials(Path file) {
        String prefix = file.getFileName() + ".partial-";
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static List<String> lines(Path out) throws IOException {
        String s = Files.readString(out, StandardCharsets.US_ASCII);
        int end = s.lastIndexOf('\n');
        return end < 0 ? List.of() : List.of(s.substring(0, end).split("\n"));
    }

    private static int count(List<String> lines, String... words) {
        int n = 0;
        for (String l : lines) {
            for (String w : words) {
                n += l.startsWith(w + " ") ? 1 : 0;
            }
        }
        return n;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /**
     * The process killed: writer threads report {@code "t n ."} after each operation returns; one
     * thread compacts the store and, every other time, copies it, reporting {@code "compacted k ."}
     * and {@code "copied PATH ."} after each. Arguments: store file, seed, round.
     */
    static final class Child {
        private Child() {}

        public static void main(String[] args) throws InterruptedException {
            Path file = Path.of(args[0]);
            long seed = Long.parseLong(args[1]);
            int round = Integer.parseInt(args[2]);
            OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 256);
            HtodStore s = Htod.builder(file).createIfMissing(false).durability(Durability.SYNC).open();
            Thread[] threads = new Thread[THREADS + 1];
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                threads[t] = new Thread(() -> {
                    SplittableRandom g = ops(seed, round, thread);
                    for (long n = 0;; n++) {
                        run(s, op(g, round, thread, n));
                        KillChild.line(out, thread + " " + n + " .");
                    }
                });
            }
            threads[THREADS] = new Thread(() -> {
                for (int k = 0;; k++) {
                    if (k % 2 == 0) {
                        Path copy = file.resolveSibling("copy-" + round + "-" + k);
                        s.copyTo(copy, Progress.NONE);
                        KillChild.line(out, "copied " + copy + " .");
                    }
                    s.compact(Progress.NONE);
                    KillChild.line(out, "compacted " + k + " .");
                }
            });
            for (Thread t : threads) {
                t.setUncaughtExceptionHandler((th, e) -> {
                    e.printStackTrace();
                    Runtime.getRuntime().halt(3);
                });
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
        }
    }
}
