package org.htod.core;

/**
 * Told how far long work inside the store has got: a recovery's heap scan and table walks, a
 * verification. The layers below the public API report through this; {@code org.htod.Progress}
 * is what callers give, adapted to it. Called from the working thread every few thousand units,
 * so it must return quickly.
 */
@FunctionalInterface
public interface StepListener {
    /** Reports nothing. */
    StepListener NONE = (done, total) -> {};

    /** Units reported at a time: a power of two, so that counting costs a mask test per unit. */
    int EVERY = 4096;

    /** {@code done} units of {@code total}, an estimate, -1 when unknown. */
    void step(long done, long total);
}
