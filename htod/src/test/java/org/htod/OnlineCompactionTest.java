package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.htod.core.device.FileDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HtodStore#compact(Progress)}: an open log-mode store is compacted into a new file and
 * swapped to it while other threads read and write, losing no acknowledged write.
 */
class OnlineCompactionTest {
    private static final String[] MAPS = {"a", "b", "c"};
    private static final int KEYS = 3000;
    /** Keys the writers of the concurrent test write: the first of each map. */
    private static final int WRITTEN = 600;

    @TempDir
    Path dir;

    private static Htod.Builder builder(Path path) {
        return Htod.builder(path).logSize(4 << 20).durability(Durability.ASYNC);
    }

    /** Many puts and removes of varied sizes over three maps; the model says what each key holds (absent: null). */
    private static void fragment(HtodStore s, Map<String, String> model) {
        SplittableRandom r = new SplittableRandom(11);
        for (String name : MAPS) {
            HtodMap<String, String> m = s.map(name, Codec.string(), Codec.string());
            for (int i = 0; i < KEYS; i++) {
                String v = name + i + "-" + "x".repeat(r.nextInt(3000));
                m.put("k" + i, v);
                model.put(name + "/k" + i, v);
            }
            for (int i = 0; i < KEYS; i++) {
                if (i % 8 != 0) {
                    m.remove("k" + i);
                    model.remove(name + "/k" + i);
                }
            }
        }
        s.checkpoint();
    }

    private static void assertMatches(HtodStore s, Map<String, String> model, String when) {
        for (String name : MAPS) {
            HtodMap<String, String> m = s.map(name, Codec.string(), Codec.string());
            long live = 0;
            for (int i = 0; i < KEYS; i++) {
                String want = model.get(name + "/k" + i);
                assertEquals(want, m.get("k" + i), when + ": " + name + "/k" + i);
                if (want != null) {
                    live++;
                }
            }
            long keys = m.keySet().stream().filter(k -> k.startsWith("k")).count();
            assertEquals(live, keys, when + ": keys of " + name);
            assertEquals(m.longSize() - m.keySet().size() + keys, keys, when + ": size of " + name);
        }
    }

    private List<Path> partials() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().contains(".partial-")).toList();
        }
    }

    @Test
    void compactsWhileWritersAndReadersRun() throws Exception {
        Path path = dir.resolve("store.htod");
        Map<String, String> model = new ConcurrentHashMap<>();
        try (HtodStore s = builder(path).open()) {
            fragment(s, model);
            s.sync();
            long before = Files.size(path);
            List<HtodMap<String, String>> maps = new ArrayList<>();
            for (String name : MAPS) {
                maps.add(s.map(name, Codec.string(), Codec.string()));
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong ops = new AtomicLong();
            AtomicLong reads = new AtomicLong();
            AtomicLong batches = new AtomicLong();
            AtomicLong slowestNanos = new AtomicLong();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                int owner = t;
                threads.add(new Thread(() -> {
                    SplittableRandom r = new SplittableRandom(100 + owner);
                    try {
                        while (!stop.get()) {
                            int mi = r.nextInt(MAPS.length);
                            int i = r.nextInt(WRITTEN / 3) * 3 + owner; // this thread's keys only
                            String key = MAPS[mi] + "/k" + i;
                            long t0 = System.nanoTime();
                            if (r.nextInt(3) == 0) {
                                maps.get(mi).remove("k" + i);
                                model.remove(key);
                            } else {
                                String v = "w" + owner + "-" + ops.get() + "-" + "y".repeat(r.nextInt(300));
                                maps.get(mi).put("k" + i, v);
                                model.put(key, v);
                            }
                            slowestNanos.accumulateAndGet(System.nanoTime() - t0, Math::max);
                            ops.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "writer-" + t));
            }
            for (int t = 0; t < 2; t++) {
                threads.add(new Thread(() -> {
                    SplittableRandom r = new SplittableRandom();
                    try {
                        while (!stop.get()) {
                            maps.get(r.nextInt(MAPS.length)).get("k" + r.nextInt(KEYS));
                            reads.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "reader-" + t));
            }
            // A batch writer: the same number under one key in each of the three maps, in one batch.
            threads.add(new Thread(() -> {
                try {
                    for (long n = 1; !stop.get(); n++) {
                        try (WriteBatch b = s.batch()) {
                            for (HtodMap<String, String> m : maps) {
                                b.put(m, "batch" + (n % 7), Long.toString(n));
                            }
                            b.commit();
                        }
                        batches.set(n);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "batcher"));
            threads.forEach(Thread::start);
            Thread.sleep(300);
            long opsBefore = ops.get();
            long batchesBefore = batches.get();
            long t0 = System.nanoTime();
            CopyReport report = s.compact(Progress.NONE);
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            long opsDuring = ops.get() - opsBefore;
            long batchesDuring = batches.get() - batchesBefore;
            long after = Files.size(path);
            Thread.sleep(300); // writers go on, through the maps they held before
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(errors.isEmpty(), () -> "errors: " + errors);
            String sizes = "file before " + before + " bytes, after " + after + " bytes (report: " + report + ")";
            System.out.println("online compaction: " + sizes + "; took " + tookMs + " ms; " + opsDuring + " writes and " + batchesDuring
                    + " batches during it, " + ops.get() + " writes, " + reads.get() + " reads, " + batches.get()
                    + " batches in all; slowest write " + slowestNanos.get() / 1_000_000 + " ms");
            assertTrue(after < before, sizes);
            assertTrue(opsDuring > 0, "writes went on during the compaction");
            // Writers run all along, and a store's file only grows while it is in service: the
            // sizes the compaction saw lie between the ones measured around it.
            assertTrue(report.sourceBytes() >= before, sizes);
            assertTrue(report.targetBytes() <= after, sizes);
            assertTrue(report.targetBytes() < report.sourceBytes(), sizes);
            assertMatches(s, model, "after compaction");
            for (String name : MAPS) {
                HtodMap<String, String> m = s.map(name, Codec.string(), Codec.string());
                for (int k = 0; k < 7; k++) {
                    assertEquals(s.map("a", Codec.string(), Codec.string()).get("batch" + k), m.get("batch" + k),
                            "batch key " + k + " in " + name);
                }
            }
            VerifyReport v = s.verify();
            assertTrue(v.ok(), v::toString);
            assertTrue(partials().isEmpty());
            // the maps held before the compaction write into the new file
            maps.get(0).put("after", "compaction");
            assertEquals("compaction", s.map("a", Codec.string(), Codec.string()).get("after"));
            maps.get(0).remove("after");
            assertTrue(s.stats().space().fileBytes() > 0);
        }
        try (HtodStore s = builder(path).open()) {
            assertTrue(s.recoveryReport().clean());
            assertMatches(s, model, "after reopen");
            HtodMap<String, String> a = s.map("a", Codec.string(), Codec.string());
            for (String name : MAPS) {
                HtodMap<String, String> m = s.map(name, Codec.string(), Codec.string());
                for (int k = 0; k < 7; k++) {
                    assertEquals(a.get("batch" + k), m.get("batch" + k), "batch key " + k + " in " + name + " after reopen");
                }
            }
            VerifyReport v = s.verify();
            assertTrue(v.ok(), v::toString);
        }
    }

    /**
     * Writes made while the copy runs, at a known point (the progress callback runs on the
     * compacting thread, during the copy, outside the gate): a clear, a new map, puts, removes,
     * a batch and an entry with a version and a time to live. All are in the new file.
     */
    @Test
    void carriesOverWhatChangesDuringTheCopy() {
        Path path = dir.resolve("store.htod");
        Map<String, String> model = new HashMap<>();
        try (HtodStore s = builder(path).open()) {
            fragment(s, model);
            HtodMap<String, String> a = s.map("a", Codec.string(), Codec.string());
            HtodMap<String, String> b = s.map("b", Codec.string(), Codec.string());
            HtodMap<String, String> c = s.map("c", Codec.string(), Codec.string());
            Iterator<String> before = a.keySet().iterator();
            assertTrue(before.hasNext());
            boolean[] once = {false};
            s.compact((done, total) -> {
                if (once[0]) {
                    return;
                }
                once[0] = true;
                c.clear();
                c.put("k1", "after clear");
                a.put("k1", "changed");
                a.remove("k0");
                a.putVersioned("k2", "versioned", 1000);
                a.put("k3", "dies", java.time.Duration.ofDays(1));
                s.map("d", Codec.string(), Codec.string()).put("new", "map");
                try (WriteBatch w = s.batch()) {
                    w.put(a, "batched", "1").put(b, "batched", "1").remove(b, "k4").commit();
                }
            });
            assertThrows(StoreClosedException.class, before::hasNext, "an iterator opened before the swap ends");
            assertCarried(s, model);
            // the map held from before still works
            a.put("held", "yes");
            assertEquals("yes", s.map("a", Codec.string(), Codec.string()).get("held"));
            assertTrue(a.keySet().iterator().hasNext());
        }
        try (HtodStore x = builder(path).open()) {
            assertCarried(x, model);
            assertEquals("yes", x.map("a", Codec.string(), Codec.string()).get("held"));
        }
    }

    private static void assertCarried(HtodStore x, Map<String, String> model) {
        HtodMap<String, String> a2 = x.map("a", Codec.string(), Codec.string());
        HtodMap<String, String> b2 = x.map("b", Codec.string(), Codec.string());
        HtodMap<String, String> c2 = x.map("c", Codec.string(), Codec.string());
        assertEquals(1, c2.size());
        assertEquals("after clear", c2.get("k1"));
        assertEquals("changed", a2.get("k1"));
        assertNull(a2.get("k0"));
        assertEquals("versioned", a2.get("k2"));
        assertEquals(1000, a2.version("k2"));
        assertEquals("dies", a2.get("k3"));
        assertEquals("map", x.map("d", Codec.string(), Codec.string()).get("new"));
        assertEquals("1", a2.get("batched"));
        assertEquals("1", b2.get("batched"));
        assertNull(b2.get("k4"));
        assertEquals(model.get("b/k8"), b2.get("k8"));
        assertEquals(List.of("a", "b", "c", "d"), x.mapNames().stream().sorted().toList());
        assertTrue(x.verify().ok());
    }

    /** The disk fills while the new file is written: a typed error, no file left, the store serving as before. */
    @Test
    void aFullDiskLeavesTheStoreInService() throws IOException {
        Path path = dir.resolve("store.htod");
        Map<String, String> model = new HashMap<>();
        try (HtodStore s = builder(path).open()) {
            fragment(s, model);
            HtodMap<String, String> a = s.map("a", Codec.string(), Codec.string());
            for (long room : new long[] {64 << 10, (4 << 20) + (256 << 10), (4 << 20) + (1 << 20)}) {
                StoreFullException e = assertThrows(StoreFullException.class,
                        () -> s.compact(Progress.NONE, p -> new CopyDiskFullTest.FillingDisk(p, room)));
                assertFalse(e.getMessage().contains("\n"), e.getMessage());
                assertTrue(partials().isEmpty(), "no partial file after a full disk at " + room + " bytes");
                assertMatches(s, model, "after a full disk at " + room + " bytes");
                a.put("k1", "still writable " + room);
                model.put("a/k1", "still writable " + room);
                assertTrue(s.verify().ok());
            }
            // and once the disk has room, it compacts
            long before = Files.size(path);
            s.compact(Progress.NONE);
            assertTrue(Files.size(path) < before, before + " -> " + Files.size(path));
            assertMatches(s, model, "after compaction");
        }
        try (HtodStore s = builder(path).open()) {
            assertMatches(s, model, "after reopen");
        }
    }

    /**
     * Another thread closes the store while the copy runs: the close waits for the copy, and then
     * either the compaction fails (the store closed, no file left) or it swapped first and the
     * close closes the new file; either way the file holds every entry.
     */
    @Test
    void closedWhileCompacting() throws Exception {
        Path path = dir.resolve("store.htod");
        Map<String, String> model = new HashMap<>();
        HtodStore s = builder(path).open();
        fragment(s, model);
        Thread[] closer = {null};
        Throwable[] closeFailed = {null};
        try {
            s.compact((done, total) -> {
                if (closer[0] == null) {
                    closer[0] = new Thread(() -> {
                        try {
                            s.close();
                        } catch (Throwable e) {
                            closeFailed[0] = e;
                        }
                    });
                    closer[0].start();
                }
            });
            System.out.println("closed while compacting: the compaction swapped first");
        } catch (StoreClosedException e) {
            System.out.println("closed while compacting: the compaction failed: " + e.getMessage());
        }
        closer[0].join();
        assertNull(closeFailed[0]);
        assertTrue(partials().isEmpty());
        assertThrows(StoreClosedException.class, () -> s.map("a", Codec.string(), Codec.string()));
        try (HtodStore x = builder(path).open()) {
            assertTrue(x.recoveryReport().clean());
            assertMatches(x, model, "after reopen");
            assertTrue(x.verify().ok());
        }
    }

    @Test
    void refusedInDirectModeAndOnADevice() {
        try (HtodStore s = Htod.builder(dir.resolve("direct.htod")).directMode(true).open()) {
            assertThrows(UnsupportedOperationException.class, () -> s.compact(Progress.NONE));
        }
        try (HtodStore s = Htod.builder(FileDevice.open(dir.resolve("device.htod"))).logSize(1 << 20).open()) {
            assertThrows(UnsupportedOperationException.class, () -> s.compact(Progress.NONE));
            s.map("m", Codec.string(), Codec.string()).put("k", "v");
        }
    }

    @Test
    void compactingTwiceAndAfterClose() {
        Path path = dir.resolve("store.htod");
        Map<String, String> model = new HashMap<>();
        HtodStore s = builder(path).open();
        fragment(s, model);
        s.compact(Progress.NONE);
        s.compact(Progress.NONE);
        assertMatches(s, model, "after two compactions");
        s.close();
        assertThrows(StoreClosedException.class, () -> s.compact(Progress.NONE));
        assertThrows(StoreClosedException.class, () -> s.map("a", Codec.string(), Codec.string()));
    }

    /**
     * Another open of the store's file tried again and again, in this process, while the store is
     * compacted: it never gets the file, and the store stays in service with every write. The old
     * file was closed before the new one was renamed and opened, and an open in between took the
     * name: the store was lost, or two stores had one file and a write made through one was lost.
     */
    @Test
    void noOtherOpenGetsTheFileDuringTheSwap() throws Exception {
        Path path = dir.resolve("store.htod");
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger opened = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
        try (HtodStore s = builder(path).open()) {
            HtodMap<String, String> m = s.map("a", Codec.string(), Codec.string());
            for (int i = 0; i < 200; i++) {
                m.put("k" + i, "v" + i);
            }
            Thread other = new Thread(() -> {
                while (!stop.get()) {
                    tries.incrementAndGet();
                    try {
                        Htod.builder(path).readOnly(true).open().close();
                        opened.incrementAndGet();
                    } catch (RuntimeException refused) {
                        // locked, or not there for an instant: as it should be
                    }
                }
            });
            other.start();
            try {
                for (int round = 0; round < 20; round++) {
                    s.compact(Progress.NONE);
                    m.put("after" + round, "w" + round);
                }
            } finally {
                stop.set(true);
                other.join(10_000);
            }
            assertEquals(0, opened.get(), "another open got the file, in " + tries.get() + " tries");
            assertTrue(tries.get() > 20, "the other open was tried: " + tries.get());
            for (int round = 0; round < 20; round++) {
                assertEquals("w" + round, m.get("after" + round));
            }
        }
        try (HtodStore s = builder(path).open()) {
            HtodMap<String, String> m = s.map("a", Codec.string(), Codec.string());
            assertEquals(220, m.size());
            assertEquals("w19", m.get("after19"));
        }
    }

    /**
     * A compaction that fails with its new store's close failing too (the disk full): the new
     * store is ended, its flusher thread gone, not left trying again for good. Each such failure
     * left one more flusher and store behind.
     */
    @Test
    void aFailedCompactionLeavesNoFlusherOfItsNewStore() throws Exception {
        org.htod.core.device.FaultyDevice disk = new org.htod.core.device.FaultyDevice(
                new org.htod.core.device.MemoryDevice());
        HtodStore out = Htod.builder(disk).logSize(1 << 20).durability(Durability.NONE).open();
        out.map("m", Codec.string(), Codec.string()).put("k", "v"); // buffered: the close must install it
        disk.failWrite(1, org.htod.core.device.FaultyDevice.Fault.DISK_FULL, true);
        RuntimeException e = OnlineCompaction.cleanUp(new RuntimeException("the compaction failed"), out, null,
                dir.resolve("store.htod.partial-0"), false, out);
        assertTrue(e.getSuppressed().length > 0, "the new store's close failed");
        String flusher = "htod-flusher " + disk.name();
        for (int i = 0; i < 100 && flusherAlive(flusher); i++) {
            Thread.sleep(10);
        }
        assertFalse(flusherAlive(flusher), "the new store's flusher is gone");
    }

    private static boolean flusherAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }

    /**
     * A store opened through a symbolic link, compacted online and offline: the link stays a link,
     * and the file it names holds the compacted store with every write. The compacted file was
     * renamed over the link, replacing it, and the file it named stayed as it was.
     */
    @Test
    void aStoreOpenedThroughALinkIsCompactedInTheFileItNames() throws Exception {
        Path real = dir.resolve("real.htod");
        Path link = dir.resolve("link.htod");
        Map<String, String> model = new HashMap<>();
        try (HtodStore s = builder(real).open()) {
            fragment(s, model);
        }
        Files.createSymbolicLink(link, real);
        try (HtodStore s = builder(link).open()) {
            s.compact(Progress.NONE);
            s.map("a", Codec.string(), Codec.string()).put("after", "online");
        }
        Htod.compact(link, Progress.NONE);
        assertTrue(Files.isSymbolicLink(link), "the link is still a link");
        try (HtodStore s = builder(real).open()) {
            assertEquals("online", s.map("a", Codec.string(), Codec.string()).get("after"));
            assertMatches(s, model, "the file the link names");
        }
    }

    /**
     * A store whose clock runs an hour behind the system's, its entries living 30 minutes by it, is
     * cleared while it is compacted: after the swap it holds only what was written after the clear.
     * The new store judged expiry by the system clock, so the carry-over of the clear passed its
     * entries over as expired, and they came back after the swap.
     */
    @Test
    void aClearDuringTheCompactionOfAStoreWhoseClockRunsBehindClearsEverything() throws Exception {
        Path path = dir.resolve("store.htod");
        java.time.Clock behind = java.time.Clock.offset(java.time.Clock.systemUTC(), java.time.Duration.ofHours(-1));
        try (HtodStore s = Htod.builder(path).logSize(4 << 20).durability(Durability.ASYNC).clock(behind).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 100; i++) {
                m.put("ttl" + i, "v", java.time.Duration.ofMinutes(30));
            }
            s.checkpoint();
            java.util.concurrent.atomic.AtomicBoolean cleared = new java.util.concurrent.atomic.AtomicBoolean();
            Progress clearOnce = (done, total) -> {
                if (cleared.compareAndSet(false, true)) { // during the copy: written keys are recorded
                    Thread t = new Thread(() -> {
                        m.clear();
                        m.put("after", "clear");
                    });
                    t.start();
                    try {
                        t.join(30_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            s.compact(clearOnce);
            assertTrue(cleared.get());
            assertEquals(1, m.size(), "only what was written after the clear");
            assertNull(m.get("ttl0"));
            assertEquals("clear", m.get("after"));
        }
    }

    /**
     * A store opened with {@code mapReads(false)} reads through its channel after a compaction too:
     * no mapping of its file shows in {@code /proc/self/maps}. The swap opened the new file with
     * reads mapped, whatever the store had been opened with.
     */
    @Test
    void theSwapKeepsReadsUnmappedWhenTheStoreWasOpenedSo() throws Exception {
        Path maps = Path.of("/proc/self/maps");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isReadable(maps), "no /proc/self/maps to read mappings from");
        Path path = dir.resolve("unmapped.htod");
        Map<String, String> model = new HashMap<>();
        try (HtodStore s = builder(path).mapReads(false).open()) {
            fragment(s, model);
            s.compact(Progress.NONE);
            assertMatches(s, model, "after the compaction"); // reads, mapped or not
            String real = path.toRealPath().toString();
            assertFalse(Files.readAllLines(maps).stream().anyMatch(l -> l.endsWith(real)),
                    "a mapping of " + real + " after the swap");
        }
    }

    /**
     * A compaction that must wait at the gate behind a long operation inside it (a {@code copyTo},
     * held here in its first progress report) lets other operations through meanwhile: a get
     * made then returns while the copy still runs. New operations were held at the gate until the
     * copy ended: every operation of the store waited for it.
     */
    @Test
    void aCompactionWaitingBehindACopyLetsOperationsThrough() throws Exception {
        Path path = dir.resolve("store.htod");
        try (HtodStore s = builder(path).open()) {
            HtodMap<String, String> m = s.map("a", Codec.string(), Codec.string());
            for (int i = 0; i < 500; i++) {
                m.put("k" + i, "v" + i);
            }
            java.util.concurrent.CountDownLatch copying = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch copyMayEnd = new java.util.concurrent.CountDownLatch(1);
            Thread copier = new Thread(() -> s.copyTo(dir.resolve("copy.htod"), (done, total) -> {
                copying.countDown();
                try {
                    copyMayEnd.await(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            copier.start();
            assertTrue(copying.await(30, java.util.concurrent.TimeUnit.SECONDS), "the copy runs");
            Thread compactor = new Thread(() -> s.compact(Progress.NONE));
            compactor.start();
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (!org.htod.testkit.Threads.inside(compactor, StoreGate.class, "acquire")
                    && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            java.util.concurrent.atomic.AtomicReference<String> got = new java.util.concurrent.atomic.AtomicReference<>();
            Thread getter = new Thread(() -> got.set(m.get("k7")));
            getter.start();
            getter.join(10_000);
            boolean through = !getter.isAlive();
            copyMayEnd.countDown();
            copier.join(30_000);
            compactor.join(60_000);
            getter.join(10_000);
            assertTrue(through, "a get returned while the compaction waited behind the copy");
            assertEquals("v7", got.get());
            assertEquals("v7", m.get("k7"), "and the compaction went on afterwards");
        }
    }
}
