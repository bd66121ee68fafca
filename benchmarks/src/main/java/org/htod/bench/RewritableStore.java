package org.htod.bench;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A loaded store plus, before every iteration, the next version of every object: each rewrite
 * pass writes new content and a new size (drawn from the corpus's distribution) for every key.
 */
@State(Scope.Benchmark)
public class RewritableStore extends LoadedStore {

    /** The version the next pass writes; the load wrote version 0. */
    int nextVersion = 1;

    /** Values for the coming pass, made before the iteration so that making them is not timed. */
    byte[][] rewriteValues;

    @Setup(Level.Iteration)
    public void prepareRewrite() {
        rewriteValues = values(nextVersion);
        nextVersion++;
    }

    /** Drops the pass's values (the pass itself ended with what it wrote forced to disk). */
    @TearDown(Level.Iteration)
    public void dropRewrite() {
        rewriteValues = null;
    }
}
