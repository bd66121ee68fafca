package org.htod.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.htod.bench.store.DiskUsage;
import org.htod.bench.store.Drain;
import org.htod.bench.store.Durability;
import org.htod.bench.store.KeyValueStore;
import org.htod.bench.store.Stores;
import org.htod.bench.workload.Corpus;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The parameters every benchmark shares, and the store they describe. Subclasses are the JMH
 * states: {@link LoadedStore} (the corpus already written) and {@link EmptyStore} (a fresh store
 * every iteration).
 *
 * <p>Stores are created under the directory named by the system property {@value #DIR_PROPERTY}
 * (default {@value #DEFAULT_DIR}, relative to the working directory), each in a fresh
 * subdirectory that is deleted afterwards. Pass it as {@code java -Dhtod.bench.dir=/mnt/disk
 * -jar benchmarks.jar ...}; JMH's forks inherit it.
 */
@State(Scope.Benchmark)
public abstract class StoreParams {

    public static final String DIR_PROPERTY = "htod.bench.dir";
    public static final String DEFAULT_DIR = "benchmarks/target/bench-data";

    /** Which store: a name from {@link Stores#names()}. */
    @Param({"htod", "htod-raw", "file-per-object", "sqlite", "h2-mvstore", "rocksdb", "mapdb", "lmdb", "chronicle-map"})
    public String store;

    /** Which corpus: {@code olympic} or {@code proxy} ({@link Corpus}). */
    @Param({"olympic"})
    public String corpus;

    /** NONE or SYNC; Chronicle Map fails at SYNC, which it cannot give. */
    @Param({"SYNC", "NONE"})
    public Durability durability;

    /**
     * How many objects the store holds. Small by default for a quick pass; the paper's tests used
     * 27,800 (olympic) and 100,000 (proxy): {@code -p objects=27800}.
     */
    @Param({"1000"})
    public int objects;

    protected Corpus workload;
    protected Path dir;
    protected KeyValueStore kv;

    /** Opens a fresh, empty store in a new directory. */
    protected final void openFresh() {
        workload = Corpus.named(corpus);
        if (!Stores.supports(store, durability)) {
            throw new UnsupportedOperationException(store + " does not support " + durability
                    + " durability; it is left out of " + durability + " comparisons (run it with -p durability=NONE)");
        }
        Path base = Paths.get(System.getProperty(DIR_PROPERTY, DEFAULT_DIR));
        try {
            Files.createDirectories(base);
            dir = Files.createTempDirectory(base, store + "-" + corpus + "-" + durability + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a store directory under " + base.toAbsolutePath(), e);
        }
        kv = Stores.open(store, dir, durability, workload.sizingHint(objects));
    }

    /** Closes the store and deletes its directory. */
    protected final void closeAndDelete() {
        close();
        if (dir != null) {
            DiskUsage.deleteRecursively(dir);
            dir = null;
        }
    }

    /** Closes the store, leaving its files. */
    protected final void close() {
        if (kv != null) {
            kv.close();
            kv = null;
        }
    }

    /**
     * Forces everything the store wrote to disk, so that write-back of an untimed phase (a load,
     * a NONE pass) does not spill into the next timed one.
     */
    protected final void settle() {
        DiskUsage.syncRecursively(dir);
    }

    /**
     * The end of a timed write pass, or of a load ({@link Drain}): {@code flush()}, the work the
     * store put off ({@code finishDeferred()}), and its files forced to disk.
     */
    final void finishPass() {
        Drain.drain(kv, dir);
    }

    /** Keys of objects {@code 0 .. objects-1}. */
    protected final byte[][] keys() {
        byte[][] keys = new byte[objects][];
        for (int i = 0; i < objects; i++) {
            keys[i] = workload.key(i);
        }
        return keys;
    }

    /** Values of objects {@code 0 .. objects-1} at {@code version}. */
    protected final byte[][] values(int version) {
        byte[][] values = new byte[objects][];
        for (int i = 0; i < objects; i++) {
            values[i] = workload.value(i, version);
        }
        return values;
    }

    public final KeyValueStore kv() {
        return kv;
    }
}
