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

    @Test
    void barOnATerminalOnly() throws Exception {
        assumeTrue(has("tmux"), "tmux is not installed");
        Path store = dir.resolve("t.htod");
        try (HtodStore s = Htod.builder(store).logSize(1 << 20).durability(Durability.NONE).open()) {
            HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
            for (int i = 0; i < 20_000; i++) {
                m.put(i, "value " + i);
            }
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        Path screen = dir.resolve("screen.txt");
        Path done = dir.resolve("done");
        String socket = "htod-test-" + ProcessHandle.current().pid();
        String cmd = "'" + java + "' -cp '" + cp + "' org.htod.cli.Main compact '" + store + "'; touch '" + done + "'; sleep 30";
        try {
            assertEquals(0, sh("tmux", "-L", socket, "new-session", "-d", "-x", "160", "-y", "10", cmd));
            for (int i = 0; i < 600 && !Files.exists(done); i++) {
                Thread.sleep(100);
            }
            assertTrue(Files.exists(done), "the compact in tmux finished");
            assertEquals(0, sh("sh", "-c", "tmux -L " + socket + " capture-pane -p > '" + screen + "'"));
        } finally {
            sh("tmux", "-L", socket, "kill-server");
        }
        String pane = Files.readString(screen);
        assertTrue(pane.contains("compact") && pane.contains("100%"), "the pane shows a finished bar:\n" + pane);
        // Into a pipe: no bar, only the result line.
        Process p = new ProcessBuilder(List.of(java, "-cp", cp, "org.htod.cli.Main", "compact", store.toString()))
                .redirectErrorStream(true).start();
        String piped = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor());
        assertTrue(!piped.contains("%") && piped.contains("bytes before"), piped);
        assertTrue(new File(store.toString()).length() > 0);
    }
}
