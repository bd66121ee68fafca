package org.htod.bench.store;

/**
 * How durable a write is when the store's call returns. Every store in one comparison runs at the
 * same level; each adapter's class comment says how it reaches each level.
 */
public enum Durability {

    /**
     * No sync: a write has reached the store's own structures or the operating system, which may
     * keep it in memory. It survives the process being killed only where the adapter says so, and
     * an operating system crash or power loss may lose it.
     */
    NONE,

    /**
     * A write (or a whole batch, for {@link KeyValueStore#putBatch}) is on stable storage when the
     * call returns: an fsync of the data, or a commit the store documents as durable.
     */
    SYNC
}
