package org.htod.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;

/**
 * A second process for the tests that need one: a store held open by another process (its file
 * lock is a process's lock, which a test's own open cannot stand in for), or one left as a crash
 * leaves it. {@code hold STORE}: opens the store, prints {@code open}, and closes it when its
 * stdin ends. {@code crash STORE N}: puts {@code N} entries into map "pages" at durability SYNC,
 * so that each is in the log when its put returns, then halts without closing.
 */
final class StoreChild {
    private StoreChild() {}

    @SuppressWarnings("try") // "hold" opens the store only to hold it, and never reads it
    public static void main(String[] args) throws IOException {
        Path store = Path.of(args[1]);
        switch (args[0]) {
            case "hold" -> {
                try (HtodStore s = Htod.builder(store).createIfMissing(false).modeAsStored(true).open()) {
                    System.out.println("open");
                    System.out.flush();
                    while (System.in.read() >= 0) {
                        // until the parent closes the pipe (or dies)
                    }
                }
            }
            case "crash" -> {
                HtodStore s = Htod.builder(store).logSize(1 << 20).durability(Durability.SYNC).open();
                HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
                for (int i = 0; i < Integer.parseInt(args[2]); i++) {
                    m.put("/page-" + i, "value " + i);
                }
                System.out.println("written");
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    /** Runs this class in a new JVM; its stdout is a pipe to the test, its stderr the test's. */
    static Process start(String... args) throws IOException {
        return jvm(StoreChild.class, Map.of(), ProcessBuilder.Redirect.PIPE, ProcessBuilder.Redirect.INHERIT, args);
    }

    /** Runs {@code main} in a new JVM with the test's class path, its environment with {@code env} added. */
    static Process jvm(Class<?> main, Map<String, String> env, ProcessBuilder.Redirect out, ProcessBuilder.Redirect err,
            String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out).redirectError(err);
        pb.environment().putAll(env);
        return pb.start();
    }

    /** Waits for {@code p} to end, killing it after {@code seconds}; returns its exit code. */
    static int await(Process p, int seconds) throws InterruptedException {
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("the child process did not end within " + seconds + " s");
        }
        return p.exitValue();
    }
}
