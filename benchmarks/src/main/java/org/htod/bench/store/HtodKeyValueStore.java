package org.htod.bench.store;

import java.nio.file.Path;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.htod.Codec;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;

/**
 * htod itself: one store file in the directory, one map of byte[] keys to byte[] values, direct
 * mode (entries written into the hashtable in place; the write-buffered mode does not exist yet),
 * the default TS storage method and the paper's Table 4 allocator settings.
 *
 * <p>Durability: the store is opened with htod's {@code Durability.NONE} and synced here, so that a
 * batch costs one sync as it does for the rivals: at {@link Durability#SYNC} every put, and every
 * batch after its last put, ends with {@code HtodStore.sync()} (the device's fsync); at {@link
 * Durability#NONE} nothing is synced until {@link #flush()} or close, and writes go to the
 * operating system as they happen.
 */
final class HtodKeyValueStore implements KeyValueStore {
    static final String NAME = "htod";

    private final Path dir;
    private final Durability durability;
    private final HtodStore store;
    private final HtodMap<byte[], byte[]> map;

    HtodKeyValueStore(Path dir, Durability durability) {
        this.dir = dir;
        this.durability = durability;
        this.store = Htod.builder(dir.resolve("store.htod")).durability(org.htod.Durability.NONE).open();
        this.map = store.map("objects", Codec.bytes(), Codec.bytes());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Durability durability() {
        return durability;
    }

    @Override
    public void put(byte[] key, byte[] value) {
        map.put(key, value);
        if (durability == Durability.SYNC) {
            store.sync();
        }
    }

    @Override
    public void putBatch(List<byte[]> keys, List<byte[]> values) {
        for (int i = 0; i < keys.size(); i++) {
            map.put(keys.get(i), values.get(i));
        }
        if (durability == Durability.SYNC) {
            store.sync();
        }
    }

    @Override
    public byte[] get(byte[] key) {
        return map.get(key);
    }

    @Override
    public boolean remove(byte[] key) {
        boolean removed = map.remove(key) != null;
        if (removed && durability == Durability.SYNC) {
            store.sync();
        }
        return removed;
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        map.keySet().forEach(action);
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        map.values().forEach(action);
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        map.forEach(action);
    }

    @Override
    public void flush() {
        store.sync();
    }

    @Override
    public long diskBytes() {
        return DiskUsage.apparentBytes(dir);
    }

    @Override
    public void close() {
        store.close();
    }
}
