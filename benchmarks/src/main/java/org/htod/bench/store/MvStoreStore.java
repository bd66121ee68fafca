package org.htod.bench.store;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.ByteArrayDataType;
import org.h2.mvstore.type.ObjectDataType;

/**
 * H2's MVStore (the storage engine of the H2 database, used on its own): one file {@code kv.mv.db},
 * one {@code MVMap<byte[], byte[]>} with the store's default settings (auto-commit on, default
 * cache and auto-compaction). Keys use {@code ObjectDataType}, which orders byte arrays; values use
 * {@code ByteArrayDataType}.
 *
 * <p>Durability: at {@link Durability#NONE} the store's default auto-commit writes changes to the
 * file in the background (after about a second, or sooner when the unsaved changes fill its
 * buffer) without syncing. At {@link Durability#SYNC} every put is followed by {@code
 * store.commit()}, which writes a new version of the changed pages and the chunk header, then
 * {@code store.sync()}, which forces the file ({@code FileChannel.force}); a batch commits and
 * syncs once.
 */
final class MvStoreStore implements KeyValueStore {

    static final String NAME = "h2-mvstore";

    private final Path dir;
    private final Durability durability;
    private final MVStore store;
    private final MVMap<byte[], byte[]> map;
    private boolean closed;

    MvStoreStore(Path dir, Durability durability) {
        this.dir = dir;
        this.durability = durability;
        try {
            store = new MVStore.Builder().fileName(dir.resolve("kv.mv.db").toString()).open();
            MVMap.Builder<byte[], byte[]> builder = new MVMap.Builder<byte[], byte[]>()
                    .keyType(new ObjectDataType())
                    .valueType(ByteArrayDataType.INSTANCE);
            map = store.openMap("kv", builder);
        } catch (RuntimeException e) {
            throw new StoreException(NAME + ": cannot open " + dir.resolve("kv.mv.db"), e);
        }
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
            commitAndSync();
        }
    }

    @Override
    public void putBatch(List<byte[]> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException("batch has " + keys.size() + " keys but " + values.size() + " values");
        }
        for (int i = 0; i < keys.size(); i++) {
            map.put(keys.get(i), values.get(i));
        }
        if (durability == Durability.SYNC) {
            commitAndSync();
        }
    }

    @Override
    public byte[] get(byte[] key) {
        // The map hands out the arrays it caches; the caller gets its own copy.
        byte[] v = map.get(key);
        return v == null ? null : v.clone();
    }

    @Override
    public boolean remove(byte[] key) {
        boolean removed = map.remove(key) != null;
        if (removed && durability == Durability.SYNC) {
            commitAndSync();
        }
        return removed;
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        for (byte[] k : map.keySet()) {
            action.accept(k.clone());
        }
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        for (byte[] v : map.values()) {
            action.accept(v.clone());
        }
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
            action.accept(e.getKey().clone(), e.getValue().clone());
        }
    }

    /** Commits: the changes are written to the file, and at SYNC synced as well. */
    @Override
    public void flush() {
        store.commit();
        if (durability == Durability.SYNC) {
            store.sync();
        }
    }

    private void commitAndSync() {
        store.commit();
        store.sync();
    }

    /** 1 while the store has changes not yet committed to its file (its background auto-commit's), else 0. */
    @Override
    public Map<String, Long> pending() {
        return Map.of("unsavedChanges", store.hasUnsavedChanges() ? 1L : 0L);
    }

    @Override
    public long diskBytes() {
        return DiskUsage.apparentBytes(dir);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        store.close();
    }
}
