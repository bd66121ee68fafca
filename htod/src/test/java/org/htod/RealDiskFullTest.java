package org.htod;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A file system that really fills up: a 4 MiB tmpfs mounted for the test, holding the store and a
 * 1 MiB file planted beside it. Puts of new keys at durability SYNC until the file system refuses
 * one with {@link StoreFullException}; then the store must stay readable with every acknowledged
 * entry; deleting the planted file gives space back, and the same instance must take writes
 * again, close, and reopen clean and sound. Skipped, saying why, where tmpfs cannot be mounted
 * (not root, no mount, no permission in a container).
 */
class RealDiskFullTest {
    private static final String VALUE = "z".repeat(3000);

    @Test
    void aFullFileSystemKeepsTheStoreReadableAndItWritesAgainOnceSpaceReturns() throws Exception {
        Path base = Path.of(System.getProperty("htod.test.dir", System.getProperty("java.io.tmpdir")));
        Files.createDirectories(base);
        Path mount = Files.createTempDirectory(base, "tmpfs");
        HtodStore store = null;
        try {
            String refused = run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount.toString());
            Assumptions.assumeTrue(refused == null, () -> "cannot mount tmpfs here: " + refused);
            Path planted = mount.resolve("planted");
            Files.write(planted, new byte[1 << 20]);
            Path file = mount.resolve("store.htod");
            store = Htod.builder(file).grain(512).logSize(1 << 20).durability(Durability.SYNC).open();
            HtodMap<String, String> m = store.map("full", Codec.string(), Codec.string());
            Map<String, String> acked = new HashMap<>();
            StoreFullException full = null;
            for (int i = 0; full == null; i++) {
                if (i > 10_000) {
                    fail("4 MiB never filled up after " + i + " puts of 3000 bytes");
                }
                try {
                    m.put("k" + i, i + VALUE);
                    acked.put("k" + i, i + VALUE);
                } catch (StoreFullException e) {
                    full = e;
                }
            }
            assertNotNull(full);
            assertTrue(acked.size() > 100, "only " + acked.size() + " puts before the file system filled up");
            String last = "k" + acked.size(); // the put that failed: absent or whole
            check(m, acked, last, "while the file system is full");

            Files.delete(planted); // space returns
            HtodMap<String, String> again = m;
            assertDoesNotThrow(() -> {
                for (int i = 0; i < 100; i++) {
                    again.put("after" + i, i + VALUE);
                }
                again.put(last, "rewritten");
            }, "once space returns, the same instance writes again");
            for (int i = 0; i < 100; i++) {
                acked.put("after" + i, i + VALUE);
            }
            acked.put(last, "rewritten");
            check(m, acked, null, "once space returned");
            HtodStore closing = store;
            store = null;
            assertDoesNotThrow(closing::close, "close() after the file system was full");

            try (HtodStore reopened = Htod.builder(file).createIfMissing(false).open()) {
                assertTrue(reopened.recoveryReport().clean(), reopened.recoveryReport().toString());
                check(reopened.map("full", Codec.string(), Codec.string()), acked, null, "after a reopen");
                VerifyReport v = reopened.verify();
                assertTrue(v.ok(), v.toString());
            }
        } finally {
            if (store != null) {
                try {
                    store.close();
                } catch (HtodException e) {
                    // the test failed already; the mount must go all the same
                }
            }
            if (run("umount", mount.toString()) != null) {
                run("umount", "-l", mount.toString()); // busy: detach it now, the kernel frees it later
            }
            try (var left = Files.list(mount)) {
                for (Path p : left.toList()) {
                    Files.delete(p); // only if the mount failed and something was written under it
                }
            }
            Files.delete(mount);
        }
    }

    /** Every acknowledged entry reads back ({@code uncertain}, if not null, absent or acknowledged); iteration agrees. */
    private static void check(HtodMap<String, String> m, Map<String, String> acked, String uncertain, String when) {
        Map<String, String> expected = new HashMap<>(acked);
        if (uncertain != null) {
            String v = assertDoesNotThrow(() -> m.get(uncertain), when + ": the store stays readable");
            assertTrue(v == null || v.equals(uncertain.substring(1) + VALUE), when + ": the failed put left " + v);
            if (v != null) {
                expected.put(uncertain, v);
            }
        }
        for (Map.Entry<String, String> e : acked.entrySet()) {
            assertEquals(e.getValue(), assertDoesNotThrow(() -> m.get(e.getKey()), when + ": the store stays readable"),
                    when + ": " + e.getKey());
        }
        assertEquals(expected, assertDoesNotThrow(() -> new HashMap<>(m), when + ": iteration"), when + ": iteration");
        assertEquals(expected.size(), m.size(), when + ": size");
    }

    /** Runs a command; null if it succeeded, else what it said. */
    private static String run(String... command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return command[0] + ": " + e.getMessage();
        }
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(1, TimeUnit.MINUTES)) {
                return String.join(" ", command) + " did not finish";
            }
            return p.exitValue() == 0 ? null : String.join(" ", List.of(command)) + ": " + out + " (status "
                    + p.exitValue() + ")";
        } finally {
            p.destroyForcibly();
        }
    }
}
