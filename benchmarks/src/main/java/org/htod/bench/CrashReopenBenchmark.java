package org.htod.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.bench.store.DiskUsage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Reopen after a crash (the README promises a restart in seconds): a child JVM loads {@code entries} entries
 * of 100 bytes ({@link CrashedStore}), syncs, rewrites some, syncs again and is killed with
 * SIGKILL. Each measured pass copies that crashed store afresh and times opening it until the
 * last key and a rewritten key read back, checked. The first pass also checks that the reopen
 * found the store unclean and that every entry is there, outside the timing.
 *
 * <p>{@code cache=warm} leaves the copy in the page cache (a process that died, on a machine that
 * did not); {@code cache=cold} drops the page cache first (a machine that restarted: every read is
 * a disk read), which needs root. {@code mode=direct} reopens a direct-mode store, which walks every
 * table after a crash, for contrast with log mode's replay of the log since the last checkpoint.
 * Each pass is a single shot in one JVM; the first includes loading htod's classes, as a restart does.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@Warmup(iterations = 0)
@Measurement(iterations = 3)
public class CrashReopenBenchmark {
    @Param({"1000000", "10000000"})
    public int entries;

    /** {@code log} (the default write path) or {@code direct}. */
    @Param({"log"})
    public String mode;

    /** {@code warm} or {@code cold} (the page cache dropped before each pass; needs root). */
    @Param({"warm", "cold"})
    public String cache;

    private Path dir;
    private Path crashed;
    private Path work;
    private HtodStore store;
    private boolean checked;

    @Setup(Level.Trial)
    public void crash() throws Exception {
        Path base = Path.of(System.getProperty(StoreParams.DIR_PROPERTY, StoreParams.DEFAULT_DIR));
        Files.createDirectories(base);
        dir = Files.createTempDirectory(base, "crash-reopen-");
        crashed = dir.resolve("crashed.htod");
        work = dir.resolve("work.htod");
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx2g", "-cp", System.getProperty("java.class.path"), CrashedStore.class.getName(),
                crashed.toString(), Integer.toString(entries), mode)).redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("LOADED")) {
                System.out.println("loader: " + line);
            }
            if (line == null) {
                throw new IllegalStateException("the loader ended before loading " + entries + " entries");
            }
            System.out.println(line + "; killed now (SIGKILL), " + Files.size(crashed) + " bytes on disk");
        } finally {
            p.destroyForcibly(); // SIGKILL
            p.waitFor(1, TimeUnit.MINUTES);
        }
    }

    @Setup(Level.Iteration)
    public void restoreCrashedStore() throws IOException {
        Files.copy(crashed, work, StandardCopyOption.REPLACE_EXISTING);
        // The copy's pages are written back here, not by the reopen's first sync: what the
        // crashed process wrote had reached the disk, or the kernel's writeback would time it.
        DiskUsage.syncRecursively(dir);
        if (cache.equals("cold")) {
            try {
                Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
            } catch (IOException e) {
                throw new UncheckedIOException("cache=cold drops the page cache, which needs root: " + e, e);
            }
        } else if (!cache.equals("warm")) {
            throw new IllegalArgumentException("cache is warm or cold, not " + cache);
        }
    }

    @Benchmark
    public byte[] reopen() {
        store = CrashedStore.open(work, mode.equals("direct"));
        HtodMap<byte[], byte[]> map = store.map(CrashedStore.MAP, Codec.bytes(), Codec.bytes());
        check(map, entries - 1);
        check(map, CrashedStore.rewrites(entries) - 1);
        return map.get(CrashedStore.key(0));
    }

    private void check(HtodMap<byte[], byte[]> map, int i) {
        byte[] v = map.get(CrashedStore.key(i));
        int version = CrashedStore.versionOf(i, entries);
        if (v == null || ByteBuffer.wrap(v).getInt(0) != i || ByteBuffer.wrap(v).getInt(4) != version) {
            throw new IllegalStateException("object " + i + " lost or wrong after the crash: expected version "
                    + version + ", found " + (v == null ? "nothing" : "version " + ByteBuffer.wrap(v).getInt(4)));
        }
    }

    @TearDown(Level.Iteration)
    public void close() {
        try {
            if (!checked) {
                checked = true;
                if (store.recoveryReport().clean()) {
                    throw new IllegalStateException("the killed store reopened clean: no crash was measured");
                }
                HtodMap<byte[], byte[]> map = store.map(CrashedStore.MAP, Codec.bytes(), Codec.bytes());
                if (map.size() != entries) {
                    throw new IllegalStateException(map.size() + " entries after the crash, not " + entries);
                }
                for (int i = 0; i < entries; i += 997) {
                    check(map, i);
                }
                System.out.println("checked: unclean reopen, " + entries + " entries; " + store.recoveryReport());
            }
        } finally {
            store.close();
            store = null;
        }
    }

    @TearDown(Level.Trial)
    public void cleanUp() {
        DiskUsage.deleteRecursively(dir);
    }
}
