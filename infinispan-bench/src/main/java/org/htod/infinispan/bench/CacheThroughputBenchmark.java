package org.htod.infinispan.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.infinispan.Cache;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Writes and reads per second through the cache API of one node: a local cache of {@code entries}
 * keys with 100-byte values, at most {@code inMemory} of them in memory, so that most reads load
 * from the store and every write goes through to it. The store is loaded before the run, then
 * reopened with durable writes ({@link Rival} says what that means for each). Writes replace
 * random existing keys; reads get random keys and check the value. Three warmup iterations of
 * 5 s: with one, every store's score still rose from one measured iteration to the next (the
 * JIT, Infinispan's and the stores' caches), htod's eight writers from 6,800 to 13,300 writes/s.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g", "-Djava.net.preferIPv4Stack=true"})
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 5)
public class CacheThroughputBenchmark {
    @Param({"HTOD", "SIFS", "ROCKSDB"})
    public Rival store;

    @Param({"100000"})
    public int entries;

    @Param({"10000"})
    public int inMemory;

    private Path dir;
    private DefaultCacheManager node;
    private Cache<String, byte[]> cache;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "htod-ispn-bench");
        DefaultCacheManager loader = Nodes.open(store, dir, false, inMemory);
        Nodes.load(loader.getCache(Nodes.CACHE), entries);
        loader.stop();
        node = Nodes.open(store, dir, true, inMemory);
        cache = node.getCache(Nodes.CACHE);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        node.stop();
        Nodes.deleteTree(dir);
    }

    /** A random stream per thread. */
    @State(Scope.Thread)
    public static class Keys {
        final SplittableRandom random = new SplittableRandom();
        int version;
    }

    @Benchmark
    @Threads(1)
    public void write(Keys k) {
        int i = k.random.nextInt(entries);
        cache.put(Nodes.key(i), Nodes.value(i, ++k.version));
    }

    /** Eight writers: what the stores make of concurrent durable writes (group commit, batching). */
    @Benchmark
    @Threads(8)
    public void write8(Keys k) {
        write(k);
    }

    @Benchmark
    @Threads(2)
    public byte[] read(Keys k) {
        int i = k.random.nextInt(entries);
        byte[] v = cache.get(Nodes.key(i));
        if (!Nodes.isValueOf(v, i)) {
            throw new IllegalStateException(store + " returned a wrong value for " + Nodes.key(i));
        }
        return v;
    }
}
