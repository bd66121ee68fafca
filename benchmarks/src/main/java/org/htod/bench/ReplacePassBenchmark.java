package org.htod.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The paper's replacement experiment timed whole: a pass of {@value #REPLACEMENTS} replacements
 * (each as in {@link ReplaceBenchmark}: remove an object chosen at random, put a new one), then the
 * store's {@code flush()}, the work it put off ({@code finishDeferred()}: htod's installs and
 * checkpoint, RocksDB's memtable flush and compactions, SQLite's WAL checkpoint) and its files
 * forced to disk, all inside the timing. The score is milliseconds per pass.
 *
 * <p>{@link ReplaceBenchmark} counts the replacements made in fixed intervals; what a store puts
 * off falls partly outside them, and a store that puts off more (a write buffer, a memtable) looks
 * faster there than it is. This pass counts it all, for every store alike.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 2)
public class ReplacePassBenchmark extends StoreBenchmark {

    /** Replacements in a pass: the paper's 20,000. */
    static final int REPLACEMENTS = 20_000;

    @Benchmark
    public void pass(LoadedStore s, ReplaceBenchmark.Live l) {
        for (int i = 0; i < REPLACEMENTS; i++) {
            ReplaceBenchmark.replaceOne(s, l);
        }
        s.finishPass();
    }
}
