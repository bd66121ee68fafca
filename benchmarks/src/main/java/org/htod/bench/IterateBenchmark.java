package org.htod.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The paper's non-keyed lookups over the loaded corpus: Ik (every key), Iv (every value), Ie
 * (every key and value). One operation is one full pass; the score is milliseconds per pass, and
 * a pass that does not visit every object fails the run.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class IterateBenchmark extends StoreBenchmark {

    @Benchmark
    public void ik(LoadedStore s, Blackhole bh) {
        int[] n = {0};
        s.kv.forEachKey(k -> {
            bh.consume(k);
            n[0]++;
        });
        check(s, n[0]);
    }

    @Benchmark
    public void iv(LoadedStore s, Blackhole bh) {
        int[] n = {0};
        s.kv.forEachValue(v -> {
            bh.consume(v);
            n[0]++;
        });
        check(s, n[0]);
    }

    @Benchmark
    public void ie(LoadedStore s, Blackhole bh) {
        int[] n = {0};
        s.kv.forEachEntry((k, v) -> {
            bh.consume(k);
            bh.consume(v);
            n[0]++;
        });
        check(s, n[0]);
    }

    private static void check(LoadedStore s, int visited) {
        if (visited != s.objects) {
            throw new IllegalStateException(s.store + " iterated " + visited + " objects, holds " + s.objects);
        }
    }
}
