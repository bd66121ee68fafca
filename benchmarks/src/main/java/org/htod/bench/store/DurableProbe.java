package org.htod.bench.store;

import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * A probe the durable-put benchmark measures beside the stores: it makes each put durable before
 * returning, as a store at {@code SYNC} does, but keeps nothing that can be read back, so reads,
 * removals and iterations refuse. The disk itself ({@link DiskDsyncStore}) and htod's log alone
 * ({@link LogAloneStore}) are probes.
 */
abstract class DurableProbe implements KeyValueStore {
    private final String name;
    private final String measures;

    /** {@code measures}: what the probe measures, for the refusals' words ("the disk's writes"). */
    DurableProbe(String name, String measures) {
        this.name = name;
        this.measures = measures;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Durability durability() {
        return Durability.SYNC;
    }

    @Override
    public final byte[] get(byte[] key) {
        throw new UnsupportedOperationException(name + " measures " + measures + "; it keeps nothing to read");
    }

    @Override
    public final boolean remove(byte[] key) {
        throw new UnsupportedOperationException(name + " measures " + measures + "; it keeps nothing to remove");
    }

    @Override
    public final void forEachKey(Consumer<byte[]> action) {
        throw new UnsupportedOperationException(name + " keeps nothing to iterate");
    }

    @Override
    public final void forEachValue(Consumer<byte[]> action) {
        throw new UnsupportedOperationException(name + " keeps nothing to iterate");
    }

    @Override
    public final void forEachEntry(BiConsumer<byte[], byte[]> action) {
        throw new UnsupportedOperationException(name + " keeps nothing to iterate");
    }

    @Override
    public final void flush() {
        // every put is durable when it returns
    }
}
