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
    private final List<Op> ops = new ArrayList<>();
    private long bytes;
    private boolean done;

    /**
     * An operation, naming its map by its handle: the map's table is looked up at commit, so that
     * a batch built before an online compaction commits into the new file.
     */
    private record Op(HtodStore.MapHandle map, byte[] key, byte[] value, long expiry, long version) {}

    WriteBatch(HtodStore store) {
        this.store = store;
    }

    private HtodStore.MapHandle target(HtodMap<?, ?> map) {
        Objects.requireNonNull(map, "map");
        if (done) {
            throw new IllegalStateException("this batch was committed or closed already");
        }
        if (map.store() != store || map.handle() == null) {
            throw new IllegalArgumentException("map '" + map.name() + "' is not a map of " + store);
        }
        return map.handle();
    }

    private WriteBatch add(HtodStore.MapHandle m, byte[] key, byte[] value, long expiry, long version) {
        bytes += 64 + key.length + (value == null ? 0 : value.length);
        long max = store.maxBatchBytes();
        if (bytes > max) {
            throw new EntryTooLargeException("a batch takes at most " + max + " bytes (one log record,"
                    + " about 1/8 of the store's log region); this one would take " + bytes);
        }
        ops.add(new Op(m, key, value, expiry, version));
        return this;
    }

    /** Maps {@code key} to {@code value} in {@code map} when the batch commits. */
    public <K, V> WriteBatch put(HtodMap<K, V> map, K key, V value) {
        HtodStore.MapHandle m = target(map);
        byte[] k = map.keyBytes(key);
        return add(m, k, map.valueBytes(k, value), 0, 0);
    }

    /** Maps {@code key} to {@code value} for {@code ttl} when the batch commits. */
    public <K, V> WriteBatch put(HtodMap<K, V> map, K key, V value, Duration ttl) {
        HtodStore.MapHandle m = target(map);
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
        HtodStore.MapHandle m = target(map);
        byte[] k = map.keyBytes(key);
        return add(m, k, map.valueBytes(k, value), 0, version);
    }

    /** Removes {@code key} from {@code map} when the batch commits. */
    public <K, V> WriteBatch remove(HtodMap<K, V> map, K key) {
        HtodStore.MapHandle m = target(map);
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
        store.refuseInFunction("commit a batch");
        store.refuseIfReadOnly("commit a batch");
        done = true;
        long removes = ops.stream().filter(op -> op.value() == null).count();
        store.enter();
        try {
            long t = store.meter().start();
            WriteLayer layer = store.layer();
            List<WriteLayer.BatchOp> resolved = new ArrayList<>(ops.size());
            for (Op op : ops) {
                store.written(op.map().name, op.key());
                BufferedMap m = op.map().target;
                resolved.add(new WriteLayer.BatchOp(m, op.key(), op.value(), op.expiry(), op.version()));
            }
            int applied = layer.batch(resolved);
            store.meter().done(OpMeter.Op.REMOVE, removes, 0);
            store.meter().done(OpMeter.Op.PUT, ops.size() - removes, t);
            return applied;
        } finally {
            store.exit();
        }
    }

    /** Discards the batch if it was not committed. */
    @Override
    public void close() {
        done = true;
    }
}
