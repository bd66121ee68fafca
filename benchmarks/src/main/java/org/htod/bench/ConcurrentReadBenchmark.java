package org.htod.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Concurrent reads: the paper's R test (one object of the loaded corpus chosen at random, as
 * {@link ReadBenchmark}) from 1, 2 and 4 threads at once on one store, each thread with its own
 * random sequence. The score is reads per second over all threads; divided by the score at one
 * thread, it says how reads scale with threads. Whether they can scale depends on the cores: on
 * a machine with fewer cores than threads, the ratio says only that readers do not serialise
 * beyond what the cores impose. {@code -t} is not needed (each method fixes its threads); {@code
 * benchmarks/run.sh} does not run it; run it by hand (see benchmarks/README.md).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 2)
@Measurement(iterations = 3, time = 2)
public class ConcurrentReadBenchmark extends StoreBenchmark {
    private static final AtomicLong SEEDS = new AtomicLong(0x52454144L);

    /** A thread's random choice of objects, seeded differently per thread. */
    @State(Scope.Thread)
    public static class Chooser {
        SplittableRandom random;

        @Setup
        public void seed() {
            random = new SplittableRandom(SEEDS.getAndIncrement());
        }
    }

    static byte[] read(LoadedStore s, Chooser c) {
        byte[] key = s.keys[c.random.nextInt(s.keys.length)];
        byte[] value = s.kv.get(key);
        if (value == null) {
            throw new IllegalStateException(s.store + " lost a loaded object");
        }
        return value;
    }

    @Benchmark
    @Threads(1)
    public byte[] r1(LoadedStore s, Chooser c) {
        return read(s, c);
    }

    @Benchmark
    @Threads(2)
    public byte[] r2(LoadedStore s, Chooser c) {
        return read(s, c);
    }

    @Benchmark
    @Threads(4)
    public byte[] r4(LoadedStore s, Chooser c) {
        return read(s, c);
    }
}
