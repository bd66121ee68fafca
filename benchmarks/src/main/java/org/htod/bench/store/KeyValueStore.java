package org.htod.bench.store;

import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * One store under test: byte-array keys to byte-array values, kept in files under one directory.
 * Every rival and htod itself sit behind this interface so that the benchmarks and the contract
 * test treat them alike.
 *
 * <p>Rules every adapter follows:
 *
 * <ul>
 *   <li>One thread at a time writes, removes or iterates; gets may come from many threads at
 *       once ({@code ConcurrentReadBenchmark}, {@code ReadThreadsBenchmark}), each answered with
 *       its own key's value ({@code ConcurrentGetsTest}).
 *   <li>A store may keep the arrays passed in (some keep them in their caches), so callers hand
 *       over arrays they never change afterwards. Arrays handed out ({@link #get}, the {@code
 *       forEach} methods) are the caller's to keep and change.
 *   <li>A write is as durable as {@link #durability()} says when the call returns.
 *   <li>Iteration visits every live entry once, in the store's own order.
 *   <li>Errors are unchecked: {@link StoreException} naming the store and the operation.
 * </ul>
 */
public interface KeyValueStore extends AutoCloseable {

    /** The adapter name, as listed by {@link Stores#names()}. */
    String name();

    /** The durability this store was opened with. */
    Durability durability();

    /** Maps {@code key} to {@code value}, replacing any previous value. */
    void put(byte[] key, byte[] value);

    /**
     * Puts every pair of the batch, as one unit where the store can: at {@link Durability#SYNC}
     * the whole batch is durable when the call returns (one commit or sync for the batch where the
     * store has batches; the paper's "commit after every 5th update"). The default puts one by one.
     */
    default void putBatch(List<byte[]> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException(
                    "batch has " + keys.size() + " keys but " + values.size() + " values");
        }
        for (int i = 0; i < keys.size(); i++) {
            put(keys.get(i), values.get(i));
        }
    }

    /** The value of {@code key}, or {@code null} when absent. */
    byte[] get(byte[] key);

    /** Removes {@code key}; true when it was present. */
    boolean remove(byte[] key);

    /** Visits every key (the paper's Ik: non-keyed lookup of the keys). */
    void forEachKey(Consumer<byte[]> action);

    /** Visits every value (the paper's Iv). */
    void forEachValue(Consumer<byte[]> action);

    /** Visits every key and its value (the paper's Ie). */
    void forEachEntry(BiConsumer<byte[], byte[]> action);

    /**
     * Ends any work in progress so that everything put so far is in the store's files: handed to
     * the operating system at {@link Durability#NONE}, on stable storage at {@link
     * Durability#SYNC}. Afterwards {@link #diskBytes()} counts every write.
     */
    void flush();

    /**
     * Does the work the store put off, so that a pass that ends here times it: afterwards nothing
     * the writes so far caused is left for the store to do. htod installs its write buffer into
     * its tables and takes a checkpoint; RocksDB flushes its memtable and waits for the
     * compactions that starts; SQLite checkpoints its write-ahead log into the database. The
     * kernel's writeback of the files is not here: the caller forces the store's files to disk
     * after this, alike for every store. Nothing by default (a store that defers no work).
     */
    default void finishDeferred() {}

    /**
     * What the store has put off and not done yet, as counts by name: htod's buffered keys and
     * bytes, RocksDB's memtable entries, flushes and compactions pending or running, SQLite's
     * write-ahead log bytes not checkpointed, MVStore's unsaved changes. Every count is zero after
     * {@link Drain#drain}; a count above zero is work a timed pass would have left out. Empty for a
     * store that defers nothing of its own (what the kernel holds of its files is {@link Drain}'s
     * to force). For tests: nothing reads it during a timed pass.
     */
    default Map<String, Long> pending() {
        return Map.of();
    }

    /**
     * Bytes the store's files take: the sum of the apparent sizes ({@code Files.size}) of the
     * regular files under its directory. Sparse or preallocated files count at their apparent
     * size; {@link DiskUsage#allocatedBytes} gives the blocks really allocated.
     */
    long diskBytes();

    /** Flushes and releases the store; idempotent. */
    @Override
    void close();
}
