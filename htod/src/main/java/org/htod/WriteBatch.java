package org.htod;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.htod.mob.BufferedMap;
import org.htod.mob.WriteLayer;

/**
 * Puts and removes over maps of one store, made visible and durable together by {@link
 * #commit}: one log record holds them all, so after a crash either every one of them is there or
 * none. Durable when {@code commit} returns at durability SYNC (as the store's durability says
 * otherwise). While a commit is applied, a concurrent reader may see some of its changes before
 * the others; a crash never leaves a part.
 *
 * <pre>{@code
 * try (WriteBatch b = store.batch()) {
 *     b.put(pages, "/results/100m", html).remove(drafts, "/results/100m").commit();
 * }
 * }</pre>
 *
 * Not thread-safe: one thread builds and commits a batch. A batch is used once.
 */
public final class WriteBatch implements AutoCloseable {
    private final HtodStore store;
    private final WriteLayer layer;
    private final List<WriteLayer.BatchOp> ops = new ArrayList<>();
    private long bytes;
    private boolean done;

    WriteBatch(HtodStore store, WriteLayer layer) {
        this.store = store;
        this.layer = layer;
    }

    private BufferedMap target(HtodMap<?, ?> map) {
        Objects.requireNonNull(map, "map");
        if (done) {
            throw new IllegalStateException("this batch was committed or closed already");
        }
        if (map.store() != store || !(map.writer() instanceof BufferedMap)) {
            throw new IllegalArgumentException("map '" + map.name() + "' is not a map of " + store);
        }
        return (BufferedMap) map.writer();
    }

    private WriteBatch add(BufferedMap m, byte[] key, byte[] value, long expiry, long version) {
        bytes += 64 + key.length + (value == null ? 0 : value.length);
        if (bytes > layer.maxBatchBytes()) {
            throw new EntryTooLargeException("a batch takes at most " + layer.maxBatchBytes() + " bytes (one log record,"
                    + " about 1/8 of the store's log region); this one would take " + bytes);
        }
        ops.add(new WriteLayer.BatchOp(m, key, value, expiry, version));
        return this;
    }

    /** Maps {@code key} to {@code value} in {@code map} when the batch commits. */
    public <K, V> WriteBatch put(HtodMap<K, V> map, K key, V value) {
        BufferedMap m = target(map);
        byte[] k = map.keyBytes(key);
        return add(m, k, map.valueBytes(k, value), 0, 0);
    }

    /** Maps {@code key} to {@code value} for {@code ttl} when the batch commits. */
    public <K, V> WriteBatch put(HtodMap<K, V> map, K key, V value, Duration ttl) {
        BufferedMap m = target(map);
        byte[] k = map.keyBytes(key);
        return add(m, k, map.valueBytes(k, value), map.expiryOf(ttl), 0);
    }

    /**
     * Maps {@code key} to {@code value} with the caller's {@code version}, unless the key's
     * version (at commit) is as high or higher: then this operation is left out of the batch.
     */
    public <K, V> WriteBatch putVersioned(HtodMap<K, V> map, K key, V value, long version) {
        if (version < 1) {
            throw new IllegalArgumentException("a version is at least 1, found " + version);
        }
        BufferedMap m = target(map);
        byte[] k = map.keyBytes(key);
        return add(m, k, map.valueBytes(k, value), 0, version);
    }

    /** Removes {@code key} from {@code map} when the batch commits. */
    public <K, V> WriteBatch remove(HtodMap<K, V> map, K key) {
        BufferedMap m = target(map);
        return add(m, map.keyBytes(key), null, 0, 0);
    }

    /** Operations in the batch so far. */
    public int size() {
        return ops.size();
    }

    /**
     * Applies every operation at once. Returns how many were applied (versioned puts that were
     * not newer are left out). The batch cannot be used afterwards.
     */
    public int commit() {
        if (done) {
            throw new IllegalStateException("this batch was committed or closed already");
        }
        done = true;
        long removes = ops.stream().filter(op -> op.value() == null).count();
        long t = store.meter().start();
        int applied = layer.batch(ops);
        store.meter().done(OpMeter.Op.REMOVE, removes, 0);
        store.meter().done(OpMeter.Op.PUT, ops.size() - removes, t);
        return applied;
    }

    /** Discards the batch if it was not committed. */
    @Override
    public void close() {
        done = true;
    }
}
