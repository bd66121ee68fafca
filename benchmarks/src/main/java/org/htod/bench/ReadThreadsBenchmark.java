package org.htod.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * How reads scale with cores: the R test of {@link ConcurrentReadBenchmark} (each thread its own
 * random sequence) from as many threads as JMH's {@code -t} says; run it at {@code -t 1}, {@code
 * -t 4} and {@code -t 16} on a machine with at least 16 cores ({@code benchmarks/device-run.sh}).
 * The score is reads per second over all threads. Its name does not match {@code ReadBenchmark},
 * so {@code benchmarks/run.sh}'s passes, made for 2 cores, leave it out.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 2)
@Measurement(iterations = 3, time = 2)
public class ReadThreadsBenchmark extends StoreBenchmark {

    @Benchmark
    public byte[] get(LoadedStore s, ConcurrentReadBenchmark.Chooser c) {
        return ConcurrentReadBenchmark.read(s, c);
    }
}
