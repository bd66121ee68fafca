package org.htod.bench;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A store holding the corpus: objects {@code 0 .. objects-1} at version 0, written once per trial
 * (one put each, at the trial's durability, then {@code flush}), then forced to disk so that its
 * write-back does not overlap the measurement. Not measured.
 */
@State(Scope.Benchmark)
public class LoadedStore extends StoreParams {

    /** Keys of the loaded objects, in object order. */
    byte[][] keys;

    @Setup(Level.Trial)
    public void load() {
        openFresh();
        keys = keys();
        byte[][] values = values(0);
        for (int i = 0; i < objects; i++) {
            kv.put(keys[i], values[i]);
        }
        kv.flush();
        settle();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        closeAndDelete();
    }
}
