package org.htod.bench.store;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import net.openhft.chronicle.map.ChronicleMap;

/**
 * Chronicle Map persisted to one memory-mapped file {@code kv.cm}, sized up front from a {@link
 * SizingHint} as its documentation requires: {@code entries}, {@code averageKeySize} and {@code
 * averageValueSize}, with {@code maxBloatFactor} 4 so the map can grow past the hint into extra
 * tiers rather than fail. On Java 17 the JVM needs the {@code --add-opens} / {@code --add-exports}
 * flags listed in {@link Stores#JVM_FLAGS}.
 *
 * <p>Durability: only {@link Durability#NONE}. A put writes into the mapped file, so it survives
 * the process being killed but not an operating system crash or power loss until the kernel writes
 * the pages back. Chronicle Map has no call that forces a put to disk, so this adapter does not
 * open at {@link Durability#SYNC}: the SYNC comparisons leave Chronicle Map out.
 */
final class ChronicleMapStore implements KeyValueStore {

    static final String NAME = "chronicle-map";

    /** How far past {@link SizingHint#entries()} the map may grow. */
    static final double MAX_BLOAT = 4.0;

    private final Path dir;
    private final ChronicleMap<byte[], byte[]> map;
    private boolean closed;

    ChronicleMapStore(Path dir, Durability durability, SizingHint hint) {
        if (durability != Durability.NONE) {
            throw new UnsupportedOperationException(
                    NAME + " cannot force a put to disk, so it runs at NONE only, not at " + durability);
        }
        this.dir = dir;
        Path file = dir.resolve("kv.cm");
        try {
            map = ChronicleMap.of(byte[].class, byte[].class)
                    .name("kv")
                    .entries(hint.entries())
                    .averageKeySize(hint.averageKeyBytes())
                    .averageValueSize(hint.averageValueBytes())
                    .maxBloatFactor(MAX_BLOAT)
                    .createPersistedTo(file.toFile());
        } catch (IOException | RuntimeException e) {
            throw new StoreException(NAME + ": cannot open " + file + " for " + hint, e);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Durability durability() {
        return Durability.NONE;
    }

    @Override
    public void put(byte[] key, byte[] value) {
        map.put(key, value);
    }

    @Override
    public byte[] get(byte[] key) {
        return map.get(key);
    }

    @Override
    public boolean remove(byte[] key) {
        return map.remove(key) != null;
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

    /** Puts are in the mapped file already. */
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
        map.close();
    }
}
