package org.htod.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tool on stores another process has open, or left as a crash leaves them ({@link
 * StoreChild}): a store's file lock is its process's, which an open in the test's own JVM cannot
 * stand in for.
 */
class OtherProcessTest {
    @TempDir
    Path dir;

    /** A closed log-mode store of 200 entries in "pages": {@code /page-i} to {@code old value i} and 100 x's. */
    private Path store(String name) {
        Path p = dir.resolve(name);
        try (HtodStore s = Htod.builder(p).logSize(1 << 20).durability(Durability.NONE).open()) {
            HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
            for (int i = 0; i < 200; i++) {
                m.put("/page-" + i, old(i));
            }
        }
        return p;
    }

    private static String old(int i) {
        return "old value " + i + "x".repeat(100);
    }

    /** Runs {@code StoreChild crash}: 200 puts to {@code /page-i} in the log, then a halt. */
    private static void crash(Path p) throws Exception {
        Process c = StoreChild.start("crash", p.toString(), "200");
        assertEquals("written", new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
        assertEquals(0, StoreChild.await(c, 60));
    }

    /**
     * Salvage of a store another process has open is refused as locked (exit 4), with nothing
     * written. It copied the file under the other process's writes, without its lock, and
     * salvaged the copy with exit 0.
     */
    @Test
    void salvageRefusesAStoreOpenInAnotherProcess() throws Exception {
        Path p = store("held.htod");
        Path target = dir.resolve("salvaged.htod");
        Process holder = StoreChild.start("hold", p.toString());
        try {
            BufferedReader said = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("open", said.readLine());
            Tool.Run r = Tool.run("salvage", "--quiet", p.toString(), target.toString());
            assertEquals(4, r.code(), r.all());
            assertTrue(r.err().startsWith("htod salvage: " + p + " is locked"), r.err());
            assertFalse(Files.exists(target));
            try (Stream<Path> files = Files.list(dir)) {
                assertEquals(List.of(), files.filter(f -> f.toString().contains(".partial")).toList());
            }
        } finally {
            holder.getOutputStream().close(); // the holder closes its store and ends
            assertEquals(0, StoreChild.await(holder, 60));
        }
        Tool.Run r = Tool.run("salvage", "--quiet", p.toString(), target.toString());
        assertEquals(0, r.code(), "once closed, it is salvaged: " + r.all());
        assertTrue(r.out().startsWith("200 entries of 1 maps into " + target + " by walk"), r.out());
    }

    /**
     * The commands that read a store leave a crashed one byte for byte as it was, so that the
     * crash is still there for the next look: each opens it read-only, its recovery in memory.
     * They used to open it as any open does: the first replayed the log into the file and took a
     * checkpoint, and the next {@code info} said the store had been closed cleanly.
     */
    @Test
    void theReadingCommandsLeaveACrashedStoreAsItWas() throws Exception {
        Path p = dir.resolve("crashed.htod");
        crash(p);
        byte[] before = java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
        for (String[] args : new String[][] {{"info"}, {"stats"}, {"verify", "--quiet"}, {"dump", "--keys-only"},
                {"info"}}) {
            List<String> line = new java.util.ArrayList<>(List.of(args));
            line.add(p.toString());
            Tool.Run r = Tool.run(line.toArray(String[]::new));
            assertEquals(0, r.code(), String.join(" ", line) + ": " + r.all());
            if (args[0].equals("info")) {
                assertTrue(r.out().contains("closed cleanly") && r.out().matches("(?s).*closed cleanly\\s+no.*"),
                        "the crash is seen every time: " + r.out());
            }
        }
        Tool.Run export = Tool.run("export", p.toString(), dir.resolve("out.jsonl").toString());
        assertEquals(0, export.code(), export.all());
        assertArrayEquals(before, java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)),
                "the store's file is as the crash left it");
    }

    /**
     * After a crash, verify counts the entries the log replayed into the write buffer. It counted
     * the tables only, and said "0 entries" of a store whose map held 200.
     */
    @Test
    void verifyAfterACrashCountsTheReplayedEntries() throws Exception {
        Path p = dir.resolve("crashed.htod");
        crash(p);
        Tool.Run r = Tool.run("verify", "--quiet", p.toString());
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().startsWith(p + ": sound: 1 maps, 200 entries ("), r.out());
    }

    /**
     * A crashed store whose tables are damaged: verify prints each problem and exits 1, and its
     * close, of a read-only open, installs nothing and says nothing. The close of an open that
     * wrote installed the replayed changes into the damaged tables and threw: exit 6 with the
     * close's message, and the report never printed (the report now comes first in any case).
     */
    @Test
    void verifyOfACrashedDamagedStorePrintsItsReport() throws Exception {
        Path p = store("damaged.htod");
        crash(p); // overwrites every key: the new values are in the log only
        Tool.damageValue(p, old(17));
        Tool.Run r = Tool.run("verify", "--quiet", p.toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.out().matches("(?s)" + java.util.regex.Pattern.quote(p.toString()) + ": offset \\d+: .*CRC32C.*"),
                r.out());
        assertEquals("", r.err(), "the read-only open's close installs nothing into the damaged tables");
    }
}
