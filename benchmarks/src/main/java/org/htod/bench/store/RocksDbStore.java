package org.htod.bench.store;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * RocksDB through rocksdbjni, one default column family in the store directory.
 *
 * <p>Options follow the RocksDB wiki's "Setup Options and Basic Tuning": background jobs set to
 * the number of cores ({@code IncreaseParallelism}), {@code bytes_per_sync} 1 MiB, dynamic level
 * bytes, 16 KiB blocks, a 10-bit Bloom filter, index and filter blocks in the block cache with
 * level 0's pinned, LZ4 compression and ZSTD for the bottommost level. Because the paper's objects
 * are kilobytes and more, values of 4 KiB and up go to blob files (integrated BlobDB, which the
 * wiki recommends for large values) with blob garbage collection on, so that overwrites reclaim
 * space.
 *
 * <p>Durability: the write-ahead log is always on. At {@link Durability#SYNC} every write uses
 * {@code WriteOptions.setSync(true)}: the WAL is synced before the put returns; a batch is one
 * {@code WriteBatch}, one sync. At {@link Durability#NONE}, {@code setSync(false)}: the WAL record
 * is written to the operating system and not synced.
 */
final class RocksDbStore implements KeyValueStore {

    static final String NAME = "rocksdb";

    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final Durability durability;
    private final Options options;
    private final BloomFilter filter;
    private final WriteOptions writeOptions;
    private final RocksDB db;
    private boolean closed;

    RocksDbStore(Path dir, Durability durability) {
        this.dir = dir;
        this.durability = durability;
        filter = new BloomFilter(10, false);
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockSize(16 * 1024)
                .setFilterPolicy(filter)
                .setCacheIndexAndFilterBlocks(true)
                .setPinL0FilterAndIndexBlocksInCache(true);
        options = new Options()
                .setCreateIfMissing(true)
                .setIncreaseParallelism(Math.max(2, Runtime.getRuntime().availableProcessors()))
                .setBytesPerSync(1 << 20)
                .setLevelCompactionDynamicLevelBytes(true)
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION)
                .setTableFormatConfig(table)
                .setEnableBlobFiles(true)
                .setMinBlobSize(4096)
                .setBlobCompressionType(CompressionType.LZ4_COMPRESSION)
                .setEnableBlobGarbageCollection(true);
        writeOptions = new WriteOptions().setSync(durability == Durability.SYNC);
        try {
            db = RocksDB.open(options, dir.toString());
        } catch (RocksDBException e) {
            writeOptions.close();
            options.close();
            filter.close();
            throw new StoreException(NAME + ": cannot open " + dir, e);
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
        try {
            db.put(writeOptions, key, value);
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": put of a " + value.length + " B value failed", e);
        }
    }

    @Override
    public void putBatch(List<byte[]> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException("batch has " + keys.size() + " keys but " + values.size() + " values");
        }
        try (WriteBatch batch = new WriteBatch()) {
            for (int i = 0; i < keys.size(); i++) {
                batch.put(keys.get(i), values.get(i));
            }
            db.write(writeOptions, batch);
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": batch of " + keys.size() + " puts failed", e);
        }
    }

    @Override
    public byte[] get(byte[] key) {
        try {
            return db.get(key);
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": get failed", e);
        }
    }

    @Override
    public boolean remove(byte[] key) {
        try {
            // RocksDB deletes blindly; the contract wants to know whether the key was there.
            if (!db.keyMayExist(key, null) || db.get(key) == null) {
                return false;
            }
            db.delete(writeOptions, key);
            return true;
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": remove failed", e);
        }
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        try (RocksIterator it = db.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                action.accept(it.key());
            }
            check(it);
        }
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        try (RocksIterator it = db.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                action.accept(it.value());
            }
            check(it);
        }
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        try (RocksIterator it = db.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                action.accept(it.key(), it.value());
            }
            check(it);
        }
    }

    private static void check(RocksIterator it) {
        try {
            it.status();
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": iteration failed", e);
        }
    }

    /** WAL records are written to the OS on every put; at SYNC they are synced too. */
    @Override
    public void flush() {
        try {
            db.flushWal(durability == Durability.SYNC);
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": WAL flush failed", e);
        }
    }

    /**
     * The memtable flushed into a table file, then a wait until no compaction is pending or
     * running (RocksJava 9.7 has no call that waits for them, so the properties are polled).
     */
    @Override
    public void finishDeferred() {
        try (FlushOptions f = new FlushOptions().setWaitForFlush(true)) {
            db.flush(f);
            while (db.getLongProperty("rocksdb.compaction-pending") > 0
                    || db.getLongProperty("rocksdb.num-running-compactions") > 0) {
                Thread.sleep(1);
            }
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": flush failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException(NAME + ": interrupted waiting for compactions", e);
        }
    }

    /**
     * Entries in the active memtable, immutable memtables waiting for their flush, and flushes and
     * compactions pending or running.
     */
    @Override
    public Map<String, Long> pending() {
        Map<String, Long> p = new LinkedHashMap<>();
        try {
            for (String property : List.of("num-entries-active-mem-table", "num-immutable-mem-table",
                    "mem-table-flush-pending", "num-running-flushes", "compaction-pending", "num-running-compactions")) {
                p.put(property, db.getLongProperty("rocksdb." + property));
            }
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": cannot read its properties", e);
        }
        return p;
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
        try {
            db.closeE();
        } catch (RocksDBException e) {
            throw new StoreException(NAME + ": close failed", e);
        } finally {
            writeOptions.close();
            options.close();
            filter.close();
        }
    }
}
