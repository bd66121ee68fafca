package org.htod.bench;

import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A store holding the corpus: objects {@code 0 .. objects-1} at version 0, written once per trial
 * in batches of {@value #BATCH} ({@code putBatch}, each durable as a unit at SYNC), then {@code
 * flush}, then the work the store put off ({@code finishDeferred}: htod's installs, RocksDB's
 * compactions), then forced to disk, so that neither that work nor its write-back overlaps the
 * measurement: every store is read settled. Not measured. Values are made batch by batch, so a
 * corpus of millions of objects never sits in the heap; the keys are kept, for the benchmarks to
 * choose from.
 */
@State(Scope.Benchmark)
public class LoadedStore extends StoreParams {

    /** Keys of the loaded objects, in object order. */
    byte[][] keys;

    static final int BATCH = 1000;

    @Setup(Level.Trial)
    public void load() {
        openFresh();
        keys = keys();
        for (int from = 0; from < objects; from += BATCH) {
            int to = Math.min(objects, from + BATCH);
            List<byte[]> ks = new ArrayList<>(to - from);
            List<byte[]> vs = new ArrayList<>(to - from);
            for (int i = from; i < to; i++) {
                ks.add(keys[i]);
                vs.add(workload.value(i, 0));
            }
            kv.putBatch(ks, vs);
        }
        finishPass();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        closeAndDelete();
    }
}
