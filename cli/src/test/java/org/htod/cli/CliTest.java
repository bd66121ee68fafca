package org.htod.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.htod.Codec;
import org.htod.CopyReport;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.Progress;
import org.htod.StorageMethod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each command of the tool run against stores this test builds. */
class CliTest {
    @TempDir
    Path dir;

    private final long seed = Long.getLong("htod.test.seed", System.nanoTime());

    record Run(int code, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Run(code, out.toString(), err.toString());
    }

    /** A closed store with {@code n} entries in "pages" and 10 in "index". */
    private Path store(String name, int n, boolean direct) {
        Path p = dir.resolve(name);
        try (HtodStore s = Htod.builder(p).directMode(direct).logSize(1 << 20).durability(Durability.NONE).open()) {
            HtodMap<String, String> pages = s.map("pages", Codec.string(), Codec.string());
            for (int i = 0; i < n; i++) {
                pages.put(key(i), value(i));
            }
            HtodMap<String, Long> index = s.map("index", Codec.string(), Codec.longs());
            for (long i = 0; i < 10; i++) {
                index.put("i" + i, i);
            }
        }
        return p;
    }

    private static String key(int i) {
        return String.format("/page-%06d.html", i);
    }

    private static String value(int i) {
        return "<html>" + i + "</html>" + "x".repeat(150);
    }

    private static Map<String, String> pages(Path p) {
        Map<String, String> m = new HashMap<>();
        try (HtodStore s = Htod.builder(p).createIfMissing(false).modeAsStored(true).open()) {
            m.putAll(s.map("pages", Codec.string(), Codec.string()));
        }
        return m;
    }

    @Test
    void infoAndStatsParse() throws Exception {
        Path p = store("a.htod", 100, false);
        Run info = run("info", p.toString());
        assertEquals(0, info.code(), info.err());
        assertTrue(info.out().contains("storage method   TS"), info.out());
        assertTrue(info.out().matches("(?s).*pages\\s+100.*"), info.out());
        assertTrue(info.out().contains("closed cleanly   yes"), info.out());
        Run stats = run("stats", "--json", p.toString());
        assertEquals(0, stats.code(), stats.err());
        assertEquals(1, stats.out().strip().lines().count(), "one line of JSON");
        JsonNode j = Json.MAPPER.readTree(stats.out());
        assertEquals(100, j.path("entries").path("pages").asLong());
        assertEquals(10, j.path("entries").path("index").asLong());
        assertTrue(j.path("lastRecovery").path("clean").asBoolean());
        assertTrue(j.path("device").path("reads").asLong() > 0, "opening read the device");
        assertEquals("TS", j.path("layout").path("storageMethod").asText());
    }

    @Test
    void verifyIsZeroOnAGoodStoreAndNamesTheOffsetOfDamage() throws Exception {
        Path p = store("v.htod", 300, true);
        Run good = run("verify", p.toString());
        assertEquals(0, good.code(), good.out() + good.err());
        assertTrue(good.out().contains("sound"), good.out());
        // Damage one entry's value: find the bytes of a known value and flip one.
        Tool.damageValue(p, value(123));
        Run bad = run("verify", p.toString());
        assertEquals(1, bad.code(), bad.out() + bad.err());
        assertTrue(bad.out().matches("(?s).*offset \\d+: .*"), bad.out());
    }

    @Test
    void exportThenImportRoundTrips() throws Exception {
        Path p = dir.resolve("e.htod");
        byte[] binary = new byte[64];
        new Random(seed).nextBytes(binary);
        binary[0] = (byte) 0xff; // not UTF-8: written as base64
        try (HtodStore s = Htod.builder(p).logSize(1 << 20).open()) {
            HtodMap<String, String> m = s.map("text", Codec.string(), Codec.string());
            m.put("a", "1");
            m.put("ttl", "lives", Duration.ofDays(1));
            m.putVersioned("v", "versioned", 42);
            s.map("bin", Codec.bytes(), Codec.bytes()).put(binary, binary);
        }
        Path lines = dir.resolve("e.jsonl");
        Run ex = run("export", p.toString(), lines.toString());
        assertEquals(0, ex.code(), ex.err());
        List<String> all = Files.readAllLines(lines);
        assertEquals(4, all.size(), String.join("\n", all));
        assertTrue(all.stream().anyMatch(l -> l.contains("\"key64\"")), "binary keys in base64");
        Path q = dir.resolve("i.htod");
        Run im = run("import", "--quiet", lines.toString(), q.toString());
        assertEquals(0, im.code(), im.err());
        try (HtodStore s = Htod.builder(q).createIfMissing(false).open()) {
            HtodMap<String, String> m = s.map("text", Codec.string(), Codec.string());
            assertEquals(Map.of("a", "1", "ttl", "lives", "v", "versioned"), new HashMap<>(m));
            assertEquals(42, m.version("v"));
            assertArrayEquals(binary, s.map("bin", Codec.bytes(), Codec.bytes()).get(binary));
            // The expiry came along: the entry's expiry as exported again equals the first.
        }
        Path again = dir.resolve("again.jsonl");
        assertEquals(0, run("export", q.toString(), again.toString()).code());
        assertEquals(sorted(all), sorted(Files.readAllLines(again)), "export, import, export: the same lines");
        Run dump = run("dump", "--keys-only", q.toString());
        assertEquals(4, dump.out().strip().lines().count());
        assertFalse(dump.out().contains("value"), dump.out());
    }

    private static List<String> sorted(List<String> l) {
        return l.stream().sorted().toList();
    }

    @Test
    void importRefusesABadLineBeforeWriting() throws Exception {
        Path lines = dir.resolve("bad.jsonl");
        Files.writeString(lines, "{\"map\":\"m\",\"key\":\"a\",\"value\":\"1\"}\n{\"map\":\"m\",\"key\":\"b\"}\n");
        Path q = dir.resolve("never.htod");
        Run r = run("import", lines.toString(), q.toString());
        assertEquals(10, r.code(), r.err());
        assertTrue(r.err().contains("line 2"), r.err());
        assertFalse(Files.exists(q), "nothing written");
    }

    @Test
    void compactKeepsEveryEntryAndShrinksAFragmentedStore() throws Exception {
        Path p = dir.resolve("frag.htod");
        Random rnd = new Random(seed);
        Map<String, String> model = new HashMap<>();
        try (HtodStore s = Htod.builder(p).logSize(1 << 20).durability(Durability.NONE).open()) {
            HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
            for (int i = 0; i < 3000; i++) {
                String v = "v".repeat(100 + rnd.nextInt(3000));
                m.put(key(i), v);
                model.put(key(i), v);
            }
            for (int i = 0; i < 3000; i++) {
                if (i % 4 != 0) {
                    m.remove(key(i));
                    model.remove(key(i));
                }
            }
        }
        long before = Files.size(p);
        Run r = run("compact", "--quiet", p.toString());
        assertEquals(0, r.code(), "seed " + seed + ": " + r.err());
        long after = Files.size(p);
        System.out.println("compact: " + before + " bytes before, " + after + " after (seed " + seed + ")");
        assertTrue(after < before, "seed " + seed + ": " + before + " -> " + after + "; " + r.out());
        assertEquals(model, pages(p), "seed " + seed);
        assertEquals(0, run("verify", p.toString()).code());
        try (var files = Files.list(dir)) {
            assertEquals(0, files.filter(f -> f.getFileName().toString().contains(".partial")).count(), "no leftovers");
        }
    }

    @Test
    void onlineCopyDuringWritesIsAConsistentPrefix() throws Exception {
        Path p = dir.resolve("live.htod");
        Path copy = dir.resolve("backup.htod");
        AtomicInteger written = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        CopyReport report;
        try (HtodStore s = Htod.builder(p).logSize(4 << 20).durability(Durability.ASYNC).open()) {
            HtodMap<String, String> m = s.map("log", Codec.string(), Codec.string());
            HtodMap<String, Long> last = s.map("last", Codec.string(), Codec.longs());
            Thread writer = new Thread(() -> {
                for (int i = 0; !stop.get(); i++) {
                    m.put(key(i), value(i));
                    last.put("last", (long) i); // after the entry: the copy must hold entry i if it holds last = i
                    written.set(i + 1);
                }
            });
            writer.start();
            while (written.get() < 2000) {
                Thread.sleep(1);
            }
            report = s.copyTo(copy, Progress.NONE);
            int atCopyEnd = written.get();
            while (written.get() < atCopyEnd + 500) {
                Thread.sleep(1);
            }
            stop.set(true);
            writer.join();
        }
        assertEquals(0, run("verify", copy.toString()).code(), "the copy verifies");
        try (HtodStore c = Htod.builder(copy).createIfMissing(false).open()) {
            HtodMap<String, String> m = c.map("log", Codec.string(), Codec.string());
            Long last = c.map("last", Codec.string(), Codec.longs()).get("last");
            int n = m.size();
            assertTrue(n >= 2000, "the copy holds what was written before it began: " + n + "; " + report);
            for (int i = 0; i < n; i++) {
                assertEquals(value(i), m.get(key(i)), "entry " + i + " of a prefix of " + n);
            }
            assertNotNull(last);
            assertTrue(last == n - 1 || last == n - 2, "last = " + last + " with " + n + " entries: one instant");
        }
        assertTrue(pages(p).isEmpty());
    }

    @Test
    void salvageRecoversEveryEntryOutsideADamagedRegion() throws Exception {
        Path p = dir.resolve("damaged.htod");
        int n = 2000;
        try (HtodStore s = Htod.builder(p).directMode(true).logSize(1 << 20).storageMethod(StorageMethod.TS)
                .durability(Durability.NONE).open()) {
            HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
            for (int i = 0; i < n; i++) {
                m.put(key(i), value(i));
            }
        }
        byte[] file = Files.readAllBytes(p);
        // Zero 64 KiB in the middle of the entries.
        int from = Tool.lastIndexOf(file, key(n / 2).getBytes(StandardCharsets.UTF_8)) / 512 * 512;
        int to = from + 64 * 1024;
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.seek(from);
            f.write(new byte[to - from]);
        }
        Run verify = run("verify", p.toString());
        assertEquals(1, verify.code(), "verify reports the damage: " + verify.out() + verify.err());
        byte[] damagedBytes = Files.readAllBytes(p);
        Path out = dir.resolve("salvaged.htod");
        Run r = run("salvage", "--quiet", p.toString(), out.toString());
        assertEquals(0, r.code(), r.err());
        assertArrayEquals(damagedBytes, Files.readAllBytes(p), "the damaged store untouched");
        Map<String, String> got = pages(out);
        int outside = 0;
        for (int i = 0; i < n; i++) {
            int at = Tool.lastIndexOf(file, key(i).getBytes(StandardCharsets.UTF_8));
            long blockStart = at - 48 - 64;
            boolean hit = blockStart < to && blockStart + 512 > from;
            if (!hit) {
                outside++;
                assertEquals(value(i), got.get(key(i)), "entry " + i + " outside the damage: " + r.out());
            }
        }
        assertTrue(outside > n / 2, "most entries lie outside 64 KiB");
        assertTrue(got.size() < n, "the damaged entries are gone, not invented");
        assertTrue(r.out().contains("by scan"), r.out());
        assertEquals(0, run("verify", out.toString()).code());
    }

    /**
     * Salvage of a store open in this very process ({@link Main#run} runs in its caller's JVM) is
     * refused as locked (exit 4), and the open store keeps its lock, so that no other process can
     * open it meanwhile; once it is closed, the salvage runs and leaves no lock of its own. The
     * salvage opened a channel of its own on the file, whose lock this process's lock refused,
     * and closing that channel dropped the open store's lock: closing any descriptor of a file
     * drops the process's locks on it.
     */
    @Test
    void salvageOfAStoreOpenInThisProcessLeavesItsLock() throws Exception {
        Path p = store("open.htod", 10, false);
        Path out = dir.resolve("salvaged.htod");
        try (HtodStore open = Htod.builder(p).createIfMissing(false).open()) {
            assertTrue(org.htod.core.device.ProcLocks.lockedByThisProcess(p), "the open store holds its lock");
            Run r = run("salvage", "--quiet", p.toString(), out.toString());
            assertEquals(4, r.code(), r.out() + r.err());
            assertTrue(r.err().startsWith("htod salvage: " + p + " is locked"), r.err());
            assertFalse(Files.exists(out));
            assertTrue(org.htod.core.device.ProcLocks.lockedByThisProcess(p), "the open store still holds its lock");
            open.map("pages", Codec.string(), Codec.string()).put(key(10), value(10));
        }
        Run r = run("salvage", "--quiet", p.toString(), out.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertFalse(org.htod.core.device.ProcLocks.lockedByThisProcess(p), "the salvage let go of the file");
        assertEquals(11, pages(out).size());
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.filter(f -> f.toString().contains(".partial")).toList());
        }
    }

    @Test
    @SuppressWarnings("try") // one store is held open, not used: the commands meet its lock
    void badInputGetsOneLineAndItsOwnExitCode() throws Exception {
        Run missing = run("info", dir.resolve("nope.htod").toString());
        assertEquals(3, missing.code());
        assertEquals(1, missing.err().strip().lines().count(), missing.err());
        assertTrue(missing.err().contains("nope.htod"), missing.err());

        Path junk = dir.resolve("junk.htod");
        Files.write(junk, "not a store at all".getBytes(StandardCharsets.UTF_8));
        Run notStore = run("info", junk.toString());
        assertEquals(3, notStore.code(), notStore.err());
        assertTrue(notStore.err().contains("junk.htod"), notStore.err());

        Path p = store("locked.htod", 10, false);
        byte[] before = Files.readAllBytes(p);
        try (HtodStore open = Htod.builder(p).createIfMissing(false).open()) {
            Run locked = run("info", p.toString());
            assertEquals(4, locked.code(), locked.err());
            assertTrue(locked.err().contains("locked.htod"), locked.err());
            assertEquals(1, locked.err().strip().lines().count());
            Path out = dir.resolve("c.htod");
            assertEquals(4, run("copy", "--quiet", p.toString(), out.toString()).code());
            assertFalse(Files.exists(out));
        }
        assertTrue(before.length > 0);

        Path newer = store("newer.htod", 10, false);
        try (RandomAccessFile f = new RandomAccessFile(newer.toFile(), "rw")) {
            // Format version 99 in both superblock copies, each with its CRC32C (over bytes
            // 0..187, stored at 188: docs/FORMAT.md) recomputed, as a newer library would write it.
            for (long slot : new long[] {0, 4096}) {
                byte[] record = new byte[188];
                f.seek(slot);
                f.readFully(record);
                java.nio.ByteBuffer.wrap(record).putInt(8, 99);
                java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                crc.update(record);
                f.seek(slot);
                f.write(record);
                f.writeInt((int) crc.getValue());
            }
        }
        byte[] newerBytes = Files.readAllBytes(newer);
        Run nw = run("info", newer.toString());
        assertEquals(5, nw.code(), nw.out() + nw.err());
        assertTrue(nw.err().contains("newer.htod") && nw.err().contains("too new"), nw.err());
        assertArrayEquals(newerBytes, Files.readAllBytes(newer), "the source untouched");

        Path target = store("exists.htod", 1, false);
        Run exists = run("copy", "--quiet", p.toString(), target.toString());
        assertEquals(9, exists.code(), exists.err());

        assertEquals(2, run("frobnicate").code());
    }

    /**
     * A full disk during a compaction or a copy (the library's CopyDiskFullTest makes one) reaches
     * the tool as a StoreFullException, possibly wrapped: exit 7, and one line naming the file.
     */
    @Test
    void aFullDiskHasItsOwnExitCodeAndOneLine() {
        org.htod.core.StoreFullException full = new org.htod.core.StoreFullException("the disk is full: cannot write the"
                + " copy of /data/s.htod into /data/s.htod.partial-1f, which is removed (write of 4096 bytes at offset 9"
                + " on /data/s.htod.partial-1f failed: the disk is full)", new IOException("No space left on device"));
        assertEquals(7, Exit.of(full).code);
        assertEquals(7, Exit.of(new RuntimeException("while compacting", full)).code, "found among the causes");
        assertEquals(full.getMessage(), Exit.message(full));
        assertEquals(8, Exit.of(new IOException("Input/output error")).code, "an I/O error is another kind");
    }

    static void delete(Path p) throws IOException {
        Files.deleteIfExists(p);
    }
}
