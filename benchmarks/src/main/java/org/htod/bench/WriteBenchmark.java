package org.htod.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The paper's write tests (§3.1), each one pass over the whole corpus, timed as one shot: the
 * score is milliseconds per pass of {@code objects} puts; divide by {@code objects} for the time
 * per object. Every put is as durable as the {@code durability} parameter says, and the pass ends
 * with the store's {@code flush()}, then the work it put off ({@code finishDeferred()}: htod's
 * installs and checkpoint, RocksDB's memtable flush and compactions, SQLite's WAL checkpoint),
 * then its files forced to disk (the kernel's writeback): a pass times everything its writes
 * cost, for every store alike, not only what a store does before it returns.
 *
 * <ul>
 *   <li>{@link #wp}: Wp, "write to uninitialized persistent storage": every object put into a
 *       fresh, empty store (new files, new allocations).
 *   <li>{@link #wn}: Wn, "write to already initialized persistent storage, every item is rewritten
 *       once": every key of the loaded corpus gets a new value of a new size.
 * </ul>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 2)
public class WriteBenchmark extends StoreBenchmark {

    @Benchmark
    public void wp(EmptyStore s) {
        byte[][] keys = s.keys;
        byte[][] values = s.values;
        for (int i = 0; i < keys.length; i++) {
            s.kv.put(keys[i], values[i]);
        }
        s.finishPass();
    }

    @Benchmark
    public void wn(RewritableStore s) {
        byte[][] keys = s.keys;
        byte[][] values = s.rewriteValues;
        for (int i = 0; i < keys.length; i++) {
            s.kv.put(keys[i], values[i]);
        }
        s.finishPass();
    }
}
