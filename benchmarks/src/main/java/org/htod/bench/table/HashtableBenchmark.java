package org.htod.bench.table;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.bench.DrainedCounters;
import org.htod.bench.DrainedPass;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.FileDevice;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * The hashtable's get / put / remove at 10 thousand, 1 million and 10 million entries of 100
 * bytes, direct mode, on a file with the OS page cache warm and durability NONE (links flushed,
 * with one sync, every 8,192), with the device I/Os per operation beside the throughput: divide
 * {@code deviceReads}, {@code deviceWrites} and {@code deviceSyncs} by {@code ops}. The cost per
 * operation should not grow with the entry count: hashing by doubling keeps chains short.
 *
 * <p>The writes ({@link #put}, {@link #removeAndPut}) leave the kernel dirty pages and the table
 * links not yet flushed when an iteration ends, which JMH's own score does not time. So each of
 * their iterations is also a {@link DrainedPass} that ends with the store synced (links flushed,
 * the file forced to disk), timed with it: the secondary scores {@code drainedOps / drainedMs}
 * give that rate ({@link DrainedCounters}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar HashtableBenchmark
 * rm benchmarks/target/bench-data/hashtable-*.htod
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
@State(Scope.Thread)
public class HashtableBenchmark {
    @Param({"10000", "1000000", "10000000"})
    public int entries;

    @Param({"100"})
    public int valueSize;

    private CountingDevice device;
    private HtodStore store;
    private HtodMap<byte[], byte[]> map;
    private byte[] value;
    private final SplittableRandom random = new SplittableRandom(3);

    /** Device I/O per operation, reported beside the throughput. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Io {
        public long deviceReads;
        public long deviceWrites;
        public long deviceSyncs;
        public long ops;
    }

    /**
     * Opens the table of {@code entries} entries, loading it the first time: the file is kept
     * under the bench directory ({@code hashtable-<entries>-<valueSize>.htod}) and reopened,
     * from its clean shutdown, by the other benchmarks of the same size, since loading ten
     * million entries takes minutes. Every benchmark leaves the same keys with values of the same size. {@code
     * benchmarks/run.sh} deletes the files afterwards.
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        Path dir = Path.of(System.getProperty("htod.bench.dir", "benchmarks/target/bench-data"));
        Files.createDirectories(dir);
        Path file = dir.resolve("hashtable-" + entries + "-" + valueSize + ".htod");
        value = new byte[valueSize];
        boolean loaded = Files.exists(file);
        if (loaded && !directModeStore(file)) {
            Files.delete(file); // left by a log-mode run, which direct mode cannot open
            loaded = false;
        }
        device = new CountingDevice(FileDevice.open(file));
        // Direct mode, as documented: a put installs its entry and link itself, so its device I/O is
        // counted in its own operation; the log mode's flusher would install it later, in the
        // middle of other operations or after the measurement.
        store = Htod.builder(device).directMode(true).grain(128).durability(Durability.NONE).open();
        map = store.map("bench", Codec.bytes(), Codec.bytes());
        if (!loaded || !store.recoveryReport().clean() || map.size() != entries) {
            map.clear();
            for (int i = 0; i < entries; i++) {
                map.put(key(i), value);
            }
            store.sync();
        }
    }

    /** Whether the store in {@code file} opens in direct mode (it is not a log-mode store). */
    private static boolean directModeStore(Path file) {
        try (HtodStore s = Htod.builder(file).modeAsStored(true).durability(Durability.NONE).open()) {
            return s.stats().writeLayer() == null;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Whether this benchmark's store is in direct mode; for its test. */
    boolean directMode() {
        return store.stats().writeLayer() == null;
    }

    /** The device's syncs so far; for its test. */
    long deviceSyncs() {
        return device.counts().syncs();
    }

    private static byte[] key(int i) {
        return ("/pages/" + i + ".html").getBytes(StandardCharsets.UTF_8);
    }

    private byte[] randomKey() {
        return key(random.nextInt(entries));
    }

    private <T> T counted(Io io, java.util.function.Supplier<T> op) {
        var before = device.counts();
        T result = op.get();
        var d = device.counts().minus(before);
        io.deviceReads += d.reads();
        io.deviceWrites += d.writes();
        io.deviceSyncs += d.syncs();
        io.ops++;
        return result;
    }

    @Benchmark
    public byte[] get(Io io) {
        return counted(io, () -> map.get(randomKey()));
    }

    @Benchmark
    public byte[] put(Io io, DrainedPass pass, DrainedCounters drained) {
        pass.op();
        return counted(io, () -> map.put(randomKey(), value));
    }

    /** Removes a random entry and puts it back, so that the table keeps its size. */
    @Benchmark
    public byte[] removeAndPut(Io io, DrainedPass pass, DrainedCounters drained) {
        byte[] k = randomKey();
        pass.op();
        return counted(io, () -> {
            map.remove(k);
            return map.put(k, value);
        });
    }

    /** The store is synced (loaded, or drained at the last iteration's end): the pass begins. */
    @Setup(Level.Iteration)
    public void beginPass(DrainedPass pass) {
        pass.begin();
    }

    /** The operations have stopped: the pass ends with the store synced, inside its time. */
    @TearDown(Level.Iteration)
    public void drainPass(DrainedPass pass) {
        pass.end(store::sync);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        store.close();
    }
}
