package org.htod.bench.store;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.HTreeMap;
import org.mapdb.Serializer;

/**
 * MapDB 3: one file {@code kv.mapdb} opened with {@code DBMaker.fileDB(...)
 * .fileMmapEnableIfSupported()} (memory-mapped files, which MapDB's documentation recommends for
 * speed on 64-bit JVMs) and an {@code HTreeMap} with {@code Serializer.BYTE_ARRAY} for keys and
 * values: MapDB's own disk hashtable, the closest rival in kind.
 *
 * <p>Durability: at {@link Durability#SYNC} the store is opened with {@code transactionEnable()}
 * (a write-ahead log) and every put is followed by {@code db.commit()}, which writes the WAL,
 * installs it into the main file and syncs the file before returning; a batch commits once. At
 * {@link Durability#NONE} transactions are off: writes go straight into the mapped file and reach
 * the disk when the operating system writes the pages back. MapDB documents that a store without
 * transactions may be corrupt after a crash.
 */
final class MapDbStore implements KeyValueStore {

    static final String NAME = "mapdb";

    private final Path dir;
    private final Durability durability;
    private final DB db;
    private final HTreeMap<byte[], byte[]> map;
    private boolean closed;

    MapDbStore(Path dir, Durability durability) {
        this.dir = dir;
        this.durability = durability;
        try {
            DBMaker.Maker maker = DBMaker.fileDB(dir.resolve("kv.mapdb").toFile()).fileMmapEnableIfSupported();
            if (durability == Durability.SYNC) {
                maker = maker.transactionEnable();
            }
            db = maker.make();
            map = db.hashMap("kv", Serializer.BYTE_ARRAY, Serializer.BYTE_ARRAY).createOrOpen();
        } catch (RuntimeException e) {
            throw new StoreException(NAME + ": cannot open " + dir.resolve("kv.mapdb"), e);
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
            db.commit();
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
            db.commit();
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
            db.commit();
        }
        return removed;
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        for (byte[] k : map.keySet()) {
            action.accept(k);
        }
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        for (byte[] v : map.values()) {
            action.accept(v);
        }
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
            action.accept(e.getKey(), e.getValue());
        }
    }

    /** At SYNC every write has committed; at NONE the writes are in the mapped file already. */
    @Override
    public void flush() {}

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
        db.close();
    }
}
