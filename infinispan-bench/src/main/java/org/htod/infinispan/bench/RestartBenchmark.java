package org.htod.infinispan.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.infinispan.manager.DefaultCacheManager;
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
 * Restart of one node after SIGKILL: a child JVM loads {@code entries} keys into the store and is
 * killed; each measured pass copies that crashed store afresh and times a node starting on it
 * until the cache is up and has read the last key back. The first pass also counts every entry
 * the restarted store holds, and fails unless all are there. The copy leaves the files in the page
 * cache, for every store alike.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g", "-Djava.net.preferIPv4Stack=true"})
@Warmup(iterations = 0)
@Measurement(iterations = 3)
public class RestartBenchmark {
    @Param({"HTOD", "SIFS", "ROCKSDB"})
    public Rival store;

    @Param({"100000", "1000000"})
    public int entries;

    private Path dir;
    private Path crashed;
    private Path work;
    private DefaultCacheManager node;
    private boolean counted;

    @Setup(Level.Trial)
    public void crash() throws Exception {
        dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "htod-ispn-restart");
        crashed = dir.resolve("crashed");
        work = dir.resolve("work");
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g", "-cp", System.getProperty("java.class.path"), CrashedStoreMaker.class.getName(),
                store.name(), Integer.toString(entries), crashed.toString())).redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("LOADED")) {
                // the loader's own log
            }
            if (line == null) {
                throw new IllegalStateException("the loader of " + store + " ended before loading " + entries + " entries");
            }
            System.out.println(store + ": " + line);
        } finally {
            p.destroyForcibly(); // SIGKILL
            p.waitFor(1, TimeUnit.MINUTES);
        }
    }

    @Setup(Level.Iteration)
    public void restoreCrashedStore() {
        Nodes.deleteTree(work);
        Nodes.copyTree(crashed, work);
    }

    @Benchmark
    public byte[] restart() {
        node = Nodes.open(store, work, true, 10_000);
        byte[] v = node.<String, byte[]>getCache(Nodes.CACHE).get(Nodes.key(entries - 1));
        if (!Nodes.isValueOf(v, entries - 1)) {
            throw new IllegalStateException(store + " lost " + Nodes.key(entries - 1) + " in the crash");
        }
        return v;
    }

    @TearDown(Level.Iteration)
    public void stop() {
        if (!counted) {
            int size = node.getCache(Nodes.CACHE).size();
            if (size != entries) {
                throw new IllegalStateException(store + " holds " + size + " entries after the crash, not " + entries);
            }
            counted = true;
        }
        node.stop();
    }

    @TearDown(Level.Trial)
    public void cleanUp() {
        Nodes.deleteTree(dir);
    }
}
