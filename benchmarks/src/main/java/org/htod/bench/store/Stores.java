package org.htod.bench.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Opens the stores under test by name. The names are the values of the benchmarks' {@code store}
 * parameter.
 */
public final class Stores {

    public static final String FILE_PER_OBJECT = FilePerObjectStore.NAME;
    public static final String SQLITE = SqliteStore.NAME;
    public static final String H2_MVSTORE = MvStoreStore.NAME;
    public static final String ROCKSDB = RocksDbStore.NAME;
    public static final String MAPDB = MapDbStore.NAME;
    public static final String LMDB = LmdbStore.NAME;
    public static final String CHRONICLE_MAP = ChronicleMapStore.NAME;

    /** htod itself, the reference every table compares against. */
    public static final String HTOD = HtodKeyValueStore.NAME;
    /** htod on a file opened with O_DIRECT: no page cache. */
    public static final String HTOD_RAW = HtodKeyValueStore.RAW_NAME;
    /** htod on a file whose reads all go through its channel, none through mappings: what the mappings save. */
    public static final String HTOD_UNMAPPED = HtodKeyValueStore.UNMAPPED_NAME;

    /** Every adapter, in the order tables list them. */
    public static final List<String> NAMES =
            List.of(HTOD, HTOD_RAW, HTOD_UNMAPPED, FILE_PER_OBJECT, SQLITE, H2_MVSTORE, ROCKSDB, MAPDB, LMDB, CHRONICLE_MAP);

    /**
     * The JVM flags the rivals need on Java 17. lmdbjava reads the address of direct buffers by
     * reflection ({@code java.nio}, {@code sun.nio.ch}); Chronicle Map reaches into JDK internals
     * for memory mapping, cleaners and code generation (Chronicle's "Java 17 support" notes), and
     * Chronicle's usage analytics, which would report to a web service, are switched off (the
     * benchmarks also leave the analytics library out). The same list is in {@code
     * benchmarks/pom.xml} (surefire), {@code benchmarks/jvm-flags.txt} (for {@code java @file}) and
     * the {@code @Fork} of {@code org.htod.bench.StoreBenchmark}; {@code JvmFlagsTest} checks.
     */
    public static final List<String> JVM_FLAGS = List.of(
            "-Dchronicle.analytics.disable=true",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
            "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
            "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED");

    private Stores() {}

    /** Every adapter name. */
    public static List<String> names() {
        return NAMES;
    }

    /** Whether {@code name} can open at {@code durability}; Chronicle Map cannot at SYNC. */
    public static boolean supports(String name, Durability durability) {
        requireKnown(name);
        return !(name.equals(CHRONICLE_MAP) && durability == Durability.SYNC);
    }

    /**
     * Opens (creating when empty) the store {@code name} in {@code dir}, which it then owns.
     *
     * @param hint what to expect, for stores that are sized up front; others ignore it
     * @throws UnsupportedOperationException when the store cannot reach {@code durability}
     */
    public static KeyValueStore open(String name, Path dir, Durability durability, SizingHint hint) {
        requireKnown(name);
        if (!supports(name, durability)) {
            throw new UnsupportedOperationException(name + " does not support durability " + durability);
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        switch (name) {
            case HtodKeyValueStore.NAME:
            case HtodKeyValueStore.RAW_NAME:
            case HtodKeyValueStore.UNMAPPED_NAME:
                return new HtodKeyValueStore(dir, durability, name);
            case FilePerObjectStore.NAME:
                return new FilePerObjectStore(dir, durability);
            case SqliteStore.NAME:
                return new SqliteStore(dir, durability);
            case MvStoreStore.NAME:
                return new MvStoreStore(dir, durability);
            case RocksDbStore.NAME:
                return new RocksDbStore(dir, durability);
            case MapDbStore.NAME:
                return new MapDbStore(dir, durability);
            case LmdbStore.NAME:
                return new LmdbStore(dir, durability);
            case ChronicleMapStore.NAME:
                return new ChronicleMapStore(dir, durability, hint);
            default:
                throw new AssertionError(name);
        }
    }

    private static void requireKnown(String name) {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown store '" + name + "', expected one of " + NAMES);
        }
    }
}
