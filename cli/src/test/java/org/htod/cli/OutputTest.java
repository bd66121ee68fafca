package org.htod.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the tool writes on stdout, as the real process writes it: its charset, and what a failed write does. */
class OutputTest {
    @TempDir
    Path dir;

    private Path store() {
        Path p = dir.resolve("s.htod");
        try (HtodStore s = Htod.builder(p).logSize(1 << 20).durability(Durability.NONE).open()) {
            s.map("pages", Codec.string(), Codec.string()).put("/café", "naïve — ✓");
        }
        return p;
    }

    /**
     * A dump under {@code LC_ALL=C} is UTF-8. The tool's writers took the platform's charset,
     * US-ASCII there on JDK 17, and wrote {@code /caf?}: a backup that had lost its keys, with
     * exit 0.
     */
    @Test
    void dumpIsUtf8UnderTheCLocale() throws Exception {
        Path p = store();
        Path out = dir.resolve("dump.jsonl");
        Process c = StoreChild.jvm(Main.class, Map.of("LC_ALL", "C"), ProcessBuilder.Redirect.to(out.toFile()),
                ProcessBuilder.Redirect.INHERIT, "dump", p.toString());
        assertEquals(0, StoreChild.await(c, 60));
        String text = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
        assertTrue(text.contains("\"key\":\"/café\"") && text.contains("\"value\":\"naïve — ✓\""), text);
    }

    /**
     * {@code htod dump s.htod > /dev/full} is an I/O error (exit 8) naming the output and why. The
     * tool wrote through {@code System.out}, a PrintStream that swallows failed writes, and exited 0.
     */
    @Test
    void dumpIntoAFullDiskIsAnIoError() throws Exception {
        File full = new File("/dev/full");
        assumeTrue(full.exists() && full.canWrite(), "no /dev/full here");
        Path p = store();
        Path err = dir.resolve("err.txt");
        Process c = StoreChild.jvm(Main.class, Map.of(), ProcessBuilder.Redirect.to(full),
                ProcessBuilder.Redirect.to(err.toFile()), "dump", p.toString());
        int code = StoreChild.await(c, 60);
        String e = Files.readString(err);
        assertEquals(8, code, e);
        assertTrue(e.startsWith("htod dump: cannot write standard output: ") && e.contains("No space left"), e);
        assertEquals(1, e.strip().lines().count(), e);
    }

    /** A writer whose every write fails, as a full disk's or a closed pipe's does. */
    private static final class Failing extends Writer {
        @Override
        public void write(char[] cbuf, int off, int len) throws IOException {
            throw new IOException("No space left on device");
        }

        @Override
        public void flush() throws IOException {
        }

        @Override
        public void close() {
        }
    }

    /**
     * Each command that prints a result exits 8 when the result cannot be written; they exited 0,
     * since a PrintWriter only sets a flag that nothing looked at.
     */
    @Test
    void aResultThatCannotBeWrittenIsAnIoError() {
        Path p = store();
        for (String[] args : new String[][] {{"dump", p.toString()}, {"stats", p.toString()}, {"info", p.toString()},
            {"verify", "--quiet", p.toString()}}) {
            StringWriter err = new StringWriter();
            int code = Main.run(new PrintWriter(new Failing()), new PrintWriter(err), args);
            assertEquals(8, code, args[0] + ": " + err);
            assertTrue(err.toString().startsWith("htod " + args[0] + ": cannot write standard output"), err.toString());
        }
    }
}
