package org.htod.bench.alloc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.htod.bench.DrainedCounters;
import org.htod.bench.DrainedPass;
import org.htod.bench.workload.TruncatedPareto;
import org.htod.core.alloc.Heap;
import org.htod.core.alloc.HeapOptions;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.MemoryDevice;
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
 * Allocator throughput per storage method and device: the paper's replacement (free a random
 * live object, allocate and write a new one; §3.2) at equilibrium, with sizes from its truncated
 * Pareto (alpha 1, k 512, C 2^10 grains: mean about 3.8 KB). {@code syncEvery} = 0 never syncs
 * (the OS may buffer); 1 syncs after every replacement (each one durable). The {@code deviceWrites}
 * and {@code deviceReads} counters, divided by {@code ops}, give the I/Os per replacement.
 * Each iteration is also a {@link DrainedPass} that ends with the heap synced, timed with it, so
 * that the kernel's writeback of what {@code syncEvery} = 0 left dirty falls inside the time: the
 * secondary scores {@code drainedOps / drainedMs} give that rate ({@link DrainedCounters}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar AllocatorBenchmark
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
@State(Scope.Thread)
public class AllocatorBenchmark {
    @Param({"TS", "PL", "PFL"})
    public StorageMethod method;

    @Param({"memory", "file"})
    public String device;

    @Param({"0"})
    public int syncEvery;

    @Param({"50000"})
    public int liveObjects;

    private Path file;
    private CountingDevice counting;
    private Heap heap;
    private final List<Long> live = new ArrayList<>();
    private final TruncatedPareto sizes = new TruncatedPareto(1.0, 512, 512 * 1024.0);
    private final SplittableRandom random = new SplittableRandom(17);
    private final ByteBuffer payload = ByteBuffer.allocate(512 * 1024);
    private long ops;

    /** I/O per replacement, reported beside the throughput. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Io {
        public long deviceWrites;
        public long deviceReads;
        public long deviceSyncs;
        public long ops;
    }

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        BlockDevice dev;
        if (device.equals("file")) {
            Path dir = Path.of(System.getProperty("htod.bench.dir", "benchmarks/target/bench-data"));
            Files.createDirectories(dir);
            file = Files.createTempFile(dir, "alloc-" + method, ".htod");
            Files.delete(file);
            dev = FileDevice.open(file);
        } else {
            dev = new MemoryDevice();
        }
        counting = new CountingDevice(dev);
        heap = Heap.create(counting, HeapOptions.defaults(method, 8192, 1L << 40, 1));
        List<ByteBuffer> batch = new ArrayList<>();
        for (int i = 0; i < liveObjects; i++) {
            batch.add(next());
            if (batch.size() == 1000 || i == liveObjects - 1) { // the last batch may be short
                for (long h : heap.allocateBatch(batch)) {
                    live.add(h);
                }
                batch.clear();
            }
        }
        heap.sync();
    }

    /** The device's syncs so far; for its test. */
    long deviceSyncs() {
        return counting.counts().syncs();
    }

    private ByteBuffer next() {
        int size = Math.max(0, sizes.sample(random) - 48);
        return payload.duplicate().limit(size);
    }

    @Benchmark
    public long replace(Io io, DrainedPass pass, DrainedCounters drained) {
        pass.op();
        var before = counting.counts();
        int victim = random.nextInt(live.size());
        heap.free(live.get(victim));
        long h = heap.allocate(next());
        live.set(victim, h);
        if (syncEvery > 0 && ++ops % syncEvery == 0) {
            heap.sync();
        }
        var d = counting.counts().minus(before);
        io.deviceWrites += d.writes();
        io.deviceReads += d.reads();
        io.deviceSyncs += d.syncs();
        io.ops++;
        return h;
    }

    /** The heap is synced (loaded, or drained at the last iteration's end): the pass begins. */
    @Setup(Level.Iteration)
    public void beginPass(DrainedPass pass) {
        pass.begin();
    }

    /** The replacements have stopped: the pass ends with the heap synced, inside its time. */
    @TearDown(Level.Iteration)
    public void drainPass(DrainedPass pass) {
        pass.end(heap::sync);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        heap.close();
        counting.close();
        if (file != null) {
            Files.deleteIfExists(file);
        }
    }
}
