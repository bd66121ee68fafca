package org.htod.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.htod.bench.store.DiskUsage;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A fresh, empty store for every iteration, with the corpus's keys and values made beforehand so
 * that only writing them is timed: the paper's "uninitialized persistent storage".
 *
 * <p>After an iteration the store is closed and forced to disk, and its directory is kept until
 * the trial ends: deleting many files right before the next iteration slows the file system
 * (journal commits, discards) during it, which would be charged to the next pass.
 */
@State(Scope.Benchmark)
public class EmptyStore extends StoreParams {

    byte[][] keys;
    byte[][] values;

    private final List<Path> used = new ArrayList<>();

    @Setup(Level.Iteration)
    public void open() {
        openFresh();
        keys = keys();
        values = values(0);
    }

    @TearDown(Level.Iteration)
    public void tearDown() {
        close();
        settle();
        used.add(dir);
        dir = null;
        keys = null;
        values = null;
    }

    @TearDown(Level.Trial)
    public void deleteAll() {
        for (Path p : used) {
            DiskUsage.deleteRecursively(p);
        }
        used.clear();
    }
}
