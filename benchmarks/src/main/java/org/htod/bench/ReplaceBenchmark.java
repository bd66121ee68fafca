package org.htod.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The replacements of the paper's Table 1 (§3.2): with the store in equilibrium, each operation
 * removes an object chosen at random and writes a new object (a new key, a size from the
 * corpus's distribution) in its place, so the number of objects stays {@code objects}. The score
 * is replacements per second; both the remove and the put are as durable as {@code durability}.
 * What a store puts off (htod's installs, RocksDB's compactions) falls partly outside the counted
 * intervals; {@link ReplacePassBenchmark} times the same replacements with all of it inside.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class ReplaceBenchmark extends StoreBenchmark {

    /** Values made ahead: new objects take their sizes and contents from this pool in turn. */
    static final int POOL = 1024;

    /** Which objects are live, and the next new object's index. */
    @State(Scope.Benchmark)
    public static class Live {
        long[] live;
        long next;
        byte[][] pool;
        SplittableRandom random;

        @Setup(Level.Trial)
        public void init(LoadedStore s) {
            live = new long[s.objects];
            for (int i = 0; i < live.length; i++) {
                live[i] = i;
            }
            next = s.objects;
            pool = new byte[POOL][];
            for (int i = 0; i < POOL; i++) {
                pool[i] = s.workload.value(next + i, 0);
            }
            random = new SplittableRandom(0x5245504CL);
        }
    }

    @Benchmark
    public void replace(LoadedStore s, Live l) {
        replaceOne(s, l);
    }

    /** One replacement: an object chosen at random removed, a new one put. */
    static void replaceOne(LoadedStore s, Live l) {
        int slot = l.random.nextInt(l.live.length);
        if (!s.kv.remove(s.workload.key(l.live[slot]))) {
            throw new IllegalStateException(s.store + " lost object " + l.live[slot]);
        }
        long id = l.next++;
        s.kv.put(s.workload.key(id), l.pool[(int) (id % POOL)]);
        l.live[slot] = id;
    }
}
