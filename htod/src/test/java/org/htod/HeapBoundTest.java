package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Memory stays bounded whatever the entry count: a child JVM with a 64 MiB heap writes 5,000,000
 * entries of 100-byte values into a file store (about 1.3 GB), reads every one back, closes,
 * reopens, reads a sample again and iterates every key. The file is deleted afterwards.
 */
class HeapBoundTest {

    /** The child must be done by then (it takes a few minutes on two cores); {@code -Dhtod.heapbound.timeout=S} seconds. */
    private static final long TIMEOUT_SECONDS = Long.getLong("htod.heapbound.timeout", 30 * 60);

    @Test
    void manyEntriesInA64MegabyteHeap() throws Exception {
        int entries = 5_000_000;
        Path file = TestStores.tempFile("heapbound");
        Path log = TestStores.tempFile("heapbound-child");
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = new ArrayList<>(List.of(java, "-Xmx64m", "-XX:+UseSerialGC", "-cp",
                    System.getProperty("java.class.path"), HeapBoundTest.class.getName(), file.toString(),
                    Integer.toString(entries)));
            // The output goes to a file, not a pipe: reading a pipe to its end would wait for the
            // child however long it runs, before the timeout below could apply.
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean ended = p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            if (!ended) {
                p.destroyForcibly().waitFor();
            }
            String out = Files.readString(log);
            System.out.print(out);
            assertTrue(ended, "child JVM still running after " + TIMEOUT_SECONDS + " s, killed; its output:\n" + out);
            assertEquals(0, p.exitValue(), "child JVM failed:\n" + out);
        } finally {
            TestStores.delete(file);
            TestStores.delete(log);
        }
    }

    /** The child: write, read back, reopen, sample. */
    public static void main(String[] args) throws IOException {
        Path file = Path.of(args[0]);
        int n = Integer.parseInt(args[1]);
        long t0 = System.nanoTime();
        try (HtodStore s = Htod.builder(file).grain(64).durability(Durability.NONE).open()) {
            HtodMap<Integer, byte[]> m = s.map("bound", Codec.ints(), Codec.bytes());
            Map<Integer, byte[]> batch = new HashMap<>();
            for (int i = 0; i < n; i++) {
                batch.put(i, value(i));
                if (batch.size() == 1000) {
                    m.putAll(batch);
                    batch.clear();
                }
            }
            m.putAll(batch);
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                check(i, m.get(i));
            }
            long t2 = System.nanoTime();
            if (m.size() != n) {
                throw new AssertionError("size " + m.size() + ", expected " + n);
            }
            System.out.printf("%d entries: written in %d ms, read in %d ms, file %d MB, used heap %d MB%n", n,
                    (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, Files.size(file) >> 20, usedMb());
        }
        try (HtodStore s = Htod.builder(file).createIfMissing(false).open()) {
            if (!s.recoveryReport().clean()) {
                throw new AssertionError("not clean after close: " + s.recoveryReport());
            }
            HtodMap<Integer, byte[]> m = s.map("bound", Codec.ints(), Codec.bytes());
            if (m.size() != n) {
                throw new AssertionError("size after reopen " + m.size() + ", expected " + n);
            }
            for (int i = 0; i < n; i += 97) {
                check(i, m.get(i));
            }
            long keys = 0;
            for (Integer k : m.keySet()) {
                keys += k >= 0 ? 1 : 0;
            }
            if (keys != n) {
                throw new AssertionError("iterated " + keys + " keys, expected " + n);
            }
            System.out.printf("reopened in %d ms and iterated; used heap %d MB%n",
                    s.recoveryReport().took().toMillis(), usedMb());
        }
    }

    private static long usedMb() {
        Runtime rt = Runtime.getRuntime();
        return (rt.totalMemory() - rt.freeMemory()) >> 20;
    }

    private static byte[] value(int i) {
        byte[] v = new byte[100];
        for (int j = 0; j < v.length; j++) {
            v[j] = (byte) (i * 31 + j);
        }
        return v;
    }

    private static void check(int i, byte[] v) {
        if (v == null || !java.util.Arrays.equals(v, value(i))) {
            throw new AssertionError("entry " + i + " reads back as " + (v == null ? "absent" : v.length + " bytes"));
        }
    }
}
