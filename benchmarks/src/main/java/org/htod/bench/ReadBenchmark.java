package org.htod.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The paper's R test: "look up each item by its name and read it". Each operation reads one
 * object of the loaded corpus chosen uniformly at random (as Table 2's reads do); the score is
 * reads per second. The object must be there: a missing one fails the run.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class ReadBenchmark extends StoreBenchmark {

    /** The random choice of objects, seeded so every store reads the same sequence. */
    @State(Scope.Thread)
    public static class Chooser {
        SplittableRandom random;

        @Setup
        public void seed() {
            random = new SplittableRandom(0x52454144L);
        }
    }

    @Benchmark
    public byte[] r(LoadedStore s, Chooser c) {
        byte[] key = s.keys[c.random.nextInt(s.keys.length)];
        byte[] value = s.kv.get(key);
        if (value == null) {
            throw new IllegalStateException(s.store + " lost a loaded object");
        }
        return value;
    }
}
