package org.htod.bench.store;

import java.nio.file.Path;

/**
 * The end of a timed write pass, the same for every store: afterwards everything the writes so far
 * caused is done. First the store's {@link KeyValueStore#flush() flush()} (everything put handed to
 * the operating system, on stable storage at {@link Durability#SYNC}), then the work it put off
 * ({@link KeyValueStore#finishDeferred() finishDeferred()}: htod installs its write buffer into its
 * tables and takes a checkpoint, RocksDB flushes its memtable and waits until no compaction is
 * pending or running, SQLite checkpoints its write-ahead log into the database), then every file
 * and directory of the store forced to disk ({@link DiskUsage#syncRecursively}), which writes back
 * what the kernel held of them, a mapped store's pages included. A throughput run calls it at the
 * end of each iteration and times it with the iteration ({@code DrainedPass}); a single-shot pass
 * calls it as its last step.
 */
public final class Drain {

    private Drain() {}

    /**
     * Drains the store {@code kv}, whose files are under {@code dir}; returns how many files and
     * directories were forced to disk.
     */
    public static int drain(KeyValueStore kv, Path dir) {
        kv.flush();
        kv.finishDeferred();
        return DiskUsage.syncRecursively(dir);
    }
}
