package org.htod.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The progress bar on a real terminal: the tool runs in a tmux pane (a pseudo-terminal) and the
 * pane shows the bar; the same command into a pipe prints no bar. Skipped where tmux is not
 * installed ({@code apt-get install tmux}).
 */
class TerminalProgressTest {
    @TempDir
    Path dir;

    private static boolean has(String command) {
        try {
            return new ProcessBuilder("sh", "-c", "command -v " + command).start().waitFor() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    private static int sh(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", cmd));
        return p.exitValue();
    }

    /** A store of 20,000 entries, closed. */
    private Path store() {
        Path store = dir.resolve("t.htod");
        try (HtodStore s = Htod.builder(store).logSize(1 << 20).durability(Durability.NONE).open()) {
            HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
            for (int i = 0; i < 20_000; i++) {
                m.put(i, "value " + i);
            }
        }
        return store;
    }

    /** What a 160 by 10 tmux pane shows once {@code htod <command> <store>} has run in it. */
    private String pane(String command, Path store) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        Path screen = dir.resolve("screen-" + command + ".txt");
        Path done = dir.resolve("done-" + command);
        String socket = "htod-test-" + ProcessHandle.current().pid() + "-" + command;
        String cmd = "'" + java + "' -cp '" + cp + "' org.htod.cli.Main " + command + " '" + store + "'; touch '" + done
                + "'; sleep 30";
        try {
            assertEquals(0, sh("tmux", "-L", socket, "new-session", "-d", "-x", "160", "-y", "10", cmd));
            for (int i = 0; i < 600 && !Files.exists(done); i++) {
                Thread.sleep(100);
            }
            assertTrue(Files.exists(done), "the " + command + " in tmux finished");
            assertEquals(0, sh("sh", "-c", "tmux -L " + socket + " capture-pane -p > '" + screen + "'"));
        } finally {
            sh("tmux", "-L", socket, "kill-server");
        }
        return Files.readString(screen);
    }

    /** What {@code htod <command> <store>} prints into a pipe, stdout and stderr together; it must exit 0. */
    private static String piped(String command, Path store) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        Process p = new ProcessBuilder(List.of(java, "-cp", cp, "org.htod.cli.Main", command, store.toString()))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    @Test
    void barOnATerminalOnly() throws Exception {
        assumeTrue(has("tmux"), "tmux is not installed");
        Path store = store();
        String pane = pane("compact", store);
        assertTrue(pane.contains("compact") && pane.contains("100%"), "the pane shows a finished bar:\n" + pane);
        // Into a pipe: no bar, only the result line.
        String piped = piped("compact", store);
        assertTrue(!piped.contains("%") && piped.contains("bytes before"), piped);
        assertTrue(new File(store.toString()).length() > 0);
    }

    @Test
    void verifyShowsItsBarOnATerminalOnly() throws Exception {
        assumeTrue(has("tmux"), "tmux is not installed");
        Path store = store();
        String pane = pane("verify", store);
        assertTrue(pane.contains("verify") && pane.contains("100%") && pane.contains("blocks"),
                "the pane shows a finished bar of blocks:\n" + pane);
        assertTrue(pane.contains("sound"), pane);
        String piped = piped("verify", store);
        assertTrue(!piped.contains("%") && piped.contains("sound"), piped);
    }
}
