package org.htod.infinispan.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.infinispan.Cache;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.manager.DefaultCacheManager;

/** One node as the benchmarks use it: a local cache over one store, keys and values they share. */
final class Nodes {
    static final String CACHE = "bench";
    static final int VALUE_BYTES = 100;

    private Nodes() {}

    /**
     * A running node: a local cache holding at most {@code inMemory} entries in memory (the rest is
     * read from the store), writing through to {@code rival} in {@code dir}.
     */
    static DefaultCacheManager open(Rival rival, Path dir, boolean durable, long inMemory) {
        GlobalConfigurationBuilder global = new GlobalConfigurationBuilder().nonClusteredDefault();
        global.globalState().disable();
        ConfigurationBuilder cache = new ConfigurationBuilder();
        cache.memory().maxCount(inMemory);
        rival.configure(cache.persistence().passivation(false), dir, durable);
        DefaultCacheManager manager = new DefaultCacheManager(global.build());
        try {
            manager.defineConfiguration(CACHE, cache.build());
            manager.getCache(CACHE);
            return manager;
        } catch (RuntimeException e) {
            manager.stop();
            throw e;
        }
    }

    static String key(int i) {
        return "key-" + i;
    }

    /** A value that names its key, so a read can be checked. */
    static byte[] value(int i, int version) {
        byte[] v = new byte[VALUE_BYTES];
        Arrays.fill(v, (byte) (i * 31 + version));
        v[0] = (byte) i;
        v[1] = (byte) (i >>> 8);
        v[2] = (byte) (i >>> 16);
        return v;
    }

    static boolean isValueOf(byte[] v, int i) {
        return v != null && v.length == VALUE_BYTES && v[0] == (byte) i && v[1] == (byte) (i >>> 8)
                && v[2] == (byte) (i >>> 16);
    }

    /** Writes keys 0 .. n-1 in batches of 1,000 (the store's batch call). */
    static void load(Cache<String, byte[]> cache, int n) {
        Map<String, byte[]> batch = new HashMap<>();
        for (int i = 0; i < n; i++) {
            batch.put(key(i), value(i, 0));
            if (batch.size() == 1000 || i == n - 1) {
                cache.putAll(batch);
                batch.clear();
            }
        }
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void copyTree(Path from, Path to) {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
