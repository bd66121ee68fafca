package org.htod.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.StoreStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Export and import at their edges: large values, bad input, and files that appear or are missing. */
class ImportExportTest {
    @TempDir
    Path dir;

    /** A closed direct-mode store: {@code small} entries in map "a", then one value of {@code big} bytes in map "z". */
    private Path directStore(String name, int small, int big) {
        Path p = dir.resolve(name);
        try (HtodStore s = Htod.builder(p).directMode(true).logSize(0).durability(Durability.NONE).open()) {
            HtodMap<String, String> a = s.map("a", Codec.string(), Codec.string());
            for (int i = 0; i < small; i++) {
                a.put("k" + i, "v" + i);
            }
            s.map("z", Codec.string(), Codec.string()).put("big", big(big));
        }
        return p;
    }

    private static String big(int bytes) {
        return "x".repeat(bytes);
    }

    private static String value(Path store, String map, String key) {
        try (HtodStore s = Htod.builder(store).createIfMissing(false).modeAsStored(true).open()) {
            return s.map(map, Codec.string(), Codec.string()).get(key);
        }
    }

    private List<Path> partials() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().contains(".partial")).toList();
        }
    }

    /**
     * What export writes from a direct-mode store, a value of 21 MiB, import restores into a new
     * direct-mode store. Import made every new store in log mode, whose default log takes values
     * of about 8 MiB, and Jackson refused any string over 20,000,000 characters.
     */
    @Test
    void aValueOf21MibComesBackIntoADirectStore() throws Exception {
        int size = 21 << 20;
        Path src = directStore("src.htod", 10, size);
        Path lines = dir.resolve("src.jsonl");
        Tool.Run ex = Tool.run("export", src.toString(), lines.toString());
        assertEquals(0, ex.code(), ex.all());
        Path q = dir.resolve("copy.htod");
        Tool.Run im = Tool.run("import", "--quiet", "--direct", lines.toString(), q.toString());
        assertEquals(0, im.code(), im.all());
        assertTrue(im.out().startsWith("11 entries imported"), im.out());
        assertEquals(big(size), value(q, "z", "big"));
        try (HtodStore s = Htod.builder(q).createIfMissing(false).modeAsStored(true).open()) {
            assertFalse(s.logged(), "made in direct mode");
            assertEquals(11, s.stats().totalEntries());
        }
        assertEquals(List.of(), partials(), "no temporary file left");
    }

    /**
     * A 10 MiB value on the last line, into a new log-mode store: refused (exit 10) before
     * anything is written, naming the line and the options that take it; with the log size it
     * names, the import succeeds. The import wrote the first lines, then failed on the last one
     * (exit 10), leaving a 67 MB store that held none of them.
     */
    @Test
    void anEntryTooLargeForTheLogIsRefusedBeforeAnythingIsWritten() throws Exception {
        Path src = directStore("src.htod", 100, 10 << 20);
        Path lines = dir.resolve("src.jsonl");
        assertEquals(0, Tool.run("export", src.toString(), lines.toString()).code());
        Path q = dir.resolve("new.htod");
        Tool.Run refused = Tool.run("import", "--quiet", lines.toString(), q.toString());
        assertEquals(10, refused.code(), refused.all());
        assertTrue(refused.err().contains(lines + " line 101: a value of 10485760 bytes"), refused.err());
        assertTrue(refused.err().contains("--direct"), refused.err());
        assertEquals(1, refused.err().strip().lines().count(), refused.err());
        assertFalse(Files.exists(q), "no store left");
        assertEquals(List.of(), partials(), "no temporary file left");

        // Into an existing log-mode store: refused as well, the store as it was.
        Path existing = dir.resolve("existing.htod");
        try (HtodStore s = Htod.builder(existing).logSize(1 << 20).open()) {
            s.map("a", Codec.string(), Codec.string()).put("k0", "before");
        }
        Tool.Run intoExisting = Tool.run("import", "--quiet", lines.toString(), existing.toString());
        assertEquals(10, intoExisting.code(), intoExisting.all());
        assertTrue(intoExisting.err().contains("keeps the log it was created with"), intoExisting.err());
        assertEquals("before", value(existing, "a", "k0"));
        Tool.Run shaped = Tool.run("import", "--quiet", "--direct", lines.toString(), existing.toString());
        assertEquals(2, shaped.code(), "an existing store keeps its own mode: " + shaped.all());

        Matcher m = Pattern.compile("--log-size (\\d+)").matcher(refused.err());
        assertTrue(m.find(), refused.err());
        Tool.Run logged = Tool.run("import", "--quiet", "--log-size", m.group(1), lines.toString(), q.toString());
        assertEquals(0, logged.code(), logged.all());
        assertEquals(big(10 << 20), value(q, "z", "big"));
        assertEquals("v99", value(q, "a", "k99"));
    }

    /**
     * A line that is not JSON, or not UTF-8, is bad input (exit 10) named by file and line. The
     * first exited 8, as an I/O error (the parser's exception is an IOException); the second said
     * only "Input length = 1", and was an I/O error too.
     */
    @Test
    void badLinesAreBadInputNamedByFileAndLine() throws Exception {
        String good = "{\"map\":\"m\",\"key\":\"a\",\"value\":\"1\"}\n";
        Path q = dir.resolve("never.htod");

        Path notJson = dir.resolve("not-json.jsonl");
        Files.writeString(notJson, good + "this is not json\n");
        Tool.Run r = Tool.run("import", notJson.toString(), q.toString());
        assertEquals(10, r.code(), r.all());
        assertTrue(r.err().contains(notJson + " line 2: not JSON"), r.err());

        Path twoOnALine = dir.resolve("two.jsonl");
        Files.writeString(twoOnALine, good + good.strip() + good);
        r = Tool.run("import", twoOnALine.toString(), q.toString());
        assertEquals(10, r.code(), "two objects on one line, the second not dropped: " + r.all());
        assertTrue(r.err().contains(twoOnALine + " line 2: not JSON"), r.err());

        Path latin1 = dir.resolve("latin1.jsonl");
        byte[] bad = "{\"map\":\"m\",\"key\":\"caf\u00e9\",\"value\":\"1\"}\n".getBytes(StandardCharsets.ISO_8859_1);
        // Far enough down that a reader decoding ahead meets the byte while returning line 1.
        Files.write(latin1, concat(good.getBytes(StandardCharsets.UTF_8), good.getBytes(StandardCharsets.UTF_8), bad));
        r = Tool.run("import", latin1.toString(), q.toString());
        assertEquals(10, r.code(), r.all());
        assertTrue(r.err().contains(latin1 + " line 3: not UTF-8 (byte 22 of the line is 0xe9)"), r.err());
        assertFalse(Files.exists(q));
        assertEquals(List.of(), partials());
    }

    /**
     * A new store whose creation fails once its file exists leaves neither the store nor its
     * temporary file. Here the log asked for is so large that a file's default heap capacity, 1
     * TiB, no longer fits below offset 2^63, which only the formatting of the new file finds; a
     * full disk or a device error fails there too. The temporary {@code NAME.partial-HEX} was
     * created outside the import's cleanup and stayed.
     */
    @Test
    void aNewStoreWhoseCreationFailsLeavesNoTemporaryFile() throws Exception {
        Path lines = dir.resolve("one.jsonl");
        Files.writeString(lines, "{\"map\":\"m\",\"key\":\"a\",\"value\":\"1\"}\n");
        Path q = dir.resolve("never.htod");
        long logSize = (1L << 63) - (1L << 39); // a multiple of 4096, as the option asks, 512 GiB short of 2^63
        Tool.Run r = Tool.run("import", "--quiet", "--log-size", Long.toString(logSize), lines.toString(),
                q.toString());
        assertNotEquals(0, r.code(), r.all());
        assertTrue(r.err().startsWith("htod import: "), r.err());
        assertFalse(Files.exists(q), "no store left");
        assertEquals(List.of(), partials(), "no temporary file left");
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /**
     * An export into a directory that does not exist is an I/O error (exit 8) naming the
     * directory. It was exit 3, "no store there", with the temporary file's bare path.
     */
    @Test
    void anExportIntoAMissingDirectoryNamesIt() {
        Path src = directStore("src.htod", 3, 10);
        Path target = dir.resolve("nodir").resolve("x.jsonl");
        Tool.Run r = Tool.run("export", src.toString(), target.toString());
        assertEquals(8, r.code(), r.all());
        assertEquals("htod export: cannot create " + target + ": no directory " + dir.resolve("nodir") + "\n",
                r.err());
    }

    /**
     * A file that appears under the export's name while it runs is kept, and the export is
     * refused (exit 9). The export renamed its file into place with ATOMIC_MOVE, which replaced
     * it, and exited 0.
     */
    @Test
    void anExportNeverReplacesAFileThatAppearedWhileItRan() throws Exception {
        Path src = dir.resolve("many.htod");
        try (HtodStore s = Htod.builder(src).logSize(16 << 20).durability(Durability.NONE).open()) {
            HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
            for (int i = 0; i < 30_000; i++) {
                m.put(i, "value " + i);
            }
        }
        Path target = dir.resolve("x.jsonl");
        CompletableFuture<Tool.Run> export = CompletableFuture.supplyAsync(() -> Tool.run("export", src.toString(),
                target.toString()));
        while (partials().isEmpty() && !export.isDone()) {
            Thread.onSpinWait();
        }
        Files.writeString(target, "someone else's\n");
        Tool.Run r = export.get();
        assertEquals(9, r.code(), r.all());
        assertTrue(r.err().contains(target + " appeared while this command ran"), r.err());
        assertEquals("someone else's\n", Files.readString(target));
        assertEquals(List.of(), partials(), "the export's file removed");
    }
}
