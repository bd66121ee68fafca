package org.htod.bench.store;

import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * A store shared by many threads one call at a time: every call holds this object's monitor. For
 * an adapter whose store is used through one connection that only one thread may use at a time
 * (SQLite's), so that the durable-put benchmark can put from many threads. The calls still run
 * one after the other, each with its own commit and sync.
 */
final class SynchronizedStore implements KeyValueStore {

    private final KeyValueStore inner;

    SynchronizedStore(KeyValueStore inner) {
        this.inner = inner;
    }

    /** The store this one serializes calls to. */
    KeyValueStore inner() {
        return inner;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public Durability durability() {
        return inner.durability();
    }

    @Override
    public synchronized void put(byte[] key, byte[] value) {
        inner.put(key, value);
    }

    @Override
    public synchronized void putBatch(List<byte[]> keys, List<byte[]> values) {
        inner.putBatch(keys, values);
    }

    @Override
    public synchronized byte[] get(byte[] key) {
        return inner.get(key);
    }

    @Override
    public synchronized boolean remove(byte[] key) {
        return inner.remove(key);
    }

    @Override
    public synchronized void forEachKey(Consumer<byte[]> action) {
        inner.forEachKey(action);
    }

    @Override
    public synchronized void forEachValue(Consumer<byte[]> action) {
        inner.forEachValue(action);
    }

    @Override
    public synchronized void forEachEntry(BiConsumer<byte[], byte[]> action) {
        inner.forEachEntry(action);
    }

    @Override
    public synchronized void flush() {
        inner.flush();
    }

    @Override
    public synchronized void finishDeferred() {
        inner.finishDeferred();
    }

    @Override
    public synchronized Map<String, Long> pending() {
        return inner.pending();
    }

    @Override
    public synchronized long diskBytes() {
        return inner.diskBytes();
    }

    @Override
    public synchronized void close() {
        inner.close();
    }
}
