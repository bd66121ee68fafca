package org.htod.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;

/**
 * Leaves a store as a crash leaves it, for {@link CrashReopenBenchmark}: loads {@code entries}
 * entries of {@value #VALUE_BYTES}-byte values into a new store (batches of 1,000, durability
 * {@code NONE}), syncs, rewrites the first tenth of the keys (at most {@value #REWRITES}) so that
 * the log holds work since the last checkpoint, syncs again, prints {@code LOADED} and waits to be
 * killed with SIGKILL. Arguments: the store's file, the number of entries, {@code log} or {@code
 * direct}.
 */
public final class CrashedStore {
    static final int VALUE_BYTES = 100;
    static final int REWRITES = 100_000;
    static final String MAP = "pages";

    private CrashedStore() {}

    static byte[] key(int i) {
        return ("/pages/" + i + ".html").getBytes(StandardCharsets.UTF_8);
    }

    /** Object {@code i}'s value at {@code version}: both in its first 12 bytes, so that a read can be checked. */
    static byte[] value(int i, int version) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_BYTES);
        b.putInt(i).putInt(version).putInt(i ^ 0x5eed);
        while (b.hasRemaining()) {
            b.put((byte) ('a' + (b.position() + i) % 26));
        }
        return b.array();
    }

    /** How many keys the loader rewrites after the load. */
    static int rewrites(int entries) {
        return Math.min(REWRITES, entries / 10);
    }

    /** The version a loaded store holds for object {@code i}. */
    static int versionOf(int i, int entries) {
        return i < rewrites(entries) ? 1 : 0;
    }

    static HtodStore open(Path file, boolean direct) {
        return Htod.builder(file).directMode(direct).durability(Durability.NONE).open();
    }

    public static void main(String[] args) throws InterruptedException {
        Path file = Path.of(args[0]);
        int entries = Integer.parseInt(args[1]);
        boolean direct = args[2].equals("direct");
        long t0 = System.nanoTime();
        HtodStore store = open(file, direct);
        HtodMap<byte[], byte[]> map = store.map(MAP, Codec.bytes(), Codec.bytes());
        Map<byte[], byte[]> batch = new LinkedHashMap<>();
        for (int i = 0; i < entries; i++) {
            batch.put(key(i), value(i, 0));
            if (batch.size() == 1000 || i == entries - 1) {
                map.putAll(batch);
                batch.clear();
            }
        }
        store.sync();
        for (int i = 0; i < rewrites(entries); i++) {
            map.put(key(i), value(i, 1));
        }
        store.sync();
        System.out.println("LOADED " + entries + " entries (" + rewrites(entries) + " rewritten) in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
