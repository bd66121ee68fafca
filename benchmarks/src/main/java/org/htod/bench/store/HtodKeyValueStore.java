package org.htod.bench.store;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.htod.Codec;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.RawDevice;

/**
 * htod itself: one store in the directory, one map of byte[] keys to byte[] values, direct mode
 * (entries written into the hashtable in place, their links flushed in groups; the write-buffered
 * mode does not exist yet), the default TS storage method and the paper's Table 4 allocator
 * settings, the default 8 MiB entry cache. Two devices:
 *
 * <ul>
 *   <li>{@value #NAME}: a {@code FileDevice}, through the operating system's page cache, as every
 *       rival but LMDB and Chronicle Map (which map their files) reads and writes;
 *   <li>{@value #RAW_NAME}: a {@code RawDevice} on a file opened with {@code O_DIRECT}: no page
 *       cache, every read the entry cache misses goes to the disk.
 * </ul>
 *
 * <p>Durability: the store is opened with htod's {@code Durability.NONE} and synced here, so that a
 * batch costs one sync as it does for the rivals: at {@link Durability#SYNC} every put, and every
 * batch after its last put, ends with {@code HtodStore.sync()} (a flush of the waiting links
 * between two device syncs); at {@link Durability#NONE} nothing is synced until {@link #flush()}
 * or close. A batch is one {@code putAll}, its entries allocated together (OBA).
 */
final class HtodKeyValueStore implements KeyValueStore {
    static final String NAME = "htod";
    static final String RAW_NAME = "htod-raw";
    /** Bound of the raw store's file: a sparse file grows only as the heap does. */
    private static final long RAW_CAPACITY = 256L << 30;

    private final String name;
    private final Path dir;
    private final Durability durability;
    private final HtodStore store;
    private final HtodMap<byte[], byte[]> map;

    HtodKeyValueStore(Path dir, Durability durability, boolean raw) {
        this.name = raw ? RAW_NAME : NAME;
        this.dir = dir;
        this.durability = durability;
        Htod.Builder b = raw ? Htod.builder(RawDevice.open(dir.resolve("store.raw"), RAW_CAPACITY))
                : Htod.builder(dir.resolve("store.htod"));
        this.store = b.durability(org.htod.Durability.NONE).open();
        this.map = store.map("objects", Codec.bytes(), Codec.bytes());
    }

    @Override
    public String name() {
        return name;
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
        Map<byte[], byte[]> batch = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            batch.put(keys.get(i), values.get(i));
        }
        map.putAll(batch);
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
