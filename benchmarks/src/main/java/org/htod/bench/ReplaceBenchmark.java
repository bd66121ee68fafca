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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The replacements of the paper's Table 1 (§3.2): with the store in equilibrium, each operation
 * removes an object chosen at random and writes a new object (a new key, a size from the
 * corpus's distribution) in its place, so the number of objects stays {@code objects}. Both the
 * remove and the put are as durable as {@code durability}. One writer thread (the stores take
 * writes from one thread at a time).
 *
 * <p>Two scores. JMH's own, replacements per second over each iteration's time, leaves out what a
 * store still has to do for them when the iteration ends (htod's write buffer not yet installed,
 * RocksDB's memtable and compactions, the kernel's dirty pages of every store). So each iteration
 * is also a {@link DrainedPass}: it begins with the store drained (by the load, or by the previous
 * iteration's end) and ends, once the replacements stop, with the store drained again ({@code
 * Drain}: flush, the work put off, every file forced to disk), timed with it; the secondary scores
 * {@code drainedOps} and {@code drainedMs} give that rate, {@code drainedOps / drainedMs}, which
 * the reports use. {@link ReplacePassBenchmark} times a fixed count of the same replacements
 * and the same drain as one shot.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
@State(Scope.Benchmark)
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

    /** The store of the trial, for the drain at each iteration's end. */
    private LoadedStore store;

    /** The store is drained (by the load, or at the last iteration's end): the pass begins. */
    @Setup(Level.Iteration)
    public void beginPass(LoadedStore s, DrainedPass pass) {
        store = s;
        pass.begin();
    }

    /** The replacements have stopped: the pass ends with the store drained, inside its time. */
    @TearDown(Level.Iteration)
    public void drainPass(DrainedPass pass) {
        pass.end(store::finishPass);
    }

    @Benchmark
    public void replace(LoadedStore s, Live l, DrainedPass pass, DrainedCounters d) {
        replaceOne(s, l);
        pass.op();
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
