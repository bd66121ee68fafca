package org.htod.bench.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.htod.bench.TestDirs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Drain} leaves nothing pending in any store, and forces every file of it: what a timed pass
 * ends with. Where a store defers work of its own (htod's write buffer, RocksDB's memtable, SQLite's
 * write-ahead log), the same writes left undrained show it pending, so that a drain skipped would
 * fail here.
 */
class DrainTest {

    /** Stores whose writes below are still pending until drained. */
    private static final List<String> DEFERRING = List.of(Stores.HTOD, Stores.ROCKSDB, Stores.SQLITE,
            DurableStores.HTOD_LOG, DurableStores.HTOD_PLACED);

    private TestDirs dirs;

    private Path dir;

    static Stream<Arguments> stores() {
        List<Arguments> out = new ArrayList<>();
        for (String name : Stores.names()) {
            out.add(Arguments.of(name, false));
        }
        for (String name : DurableStores.ALL) {
            out.add(Arguments.of(name, true));
        }
        return out.stream();
    }

    @BeforeEach
    void makeDir() throws IOException {
        dirs = TestDirs.create("drain-");
        dir = dirs.path();
    }

    @AfterEach
    void removeDir() {
        dirs.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void leavesNothingPendingAndForcesEveryFile(String name, boolean durable) throws IOException {
        try (KeyValueStore kv = durable ? DurableStores.open(name, dir)
                : Stores.open(name, dir, Durability.NONE, new SizingHint(500, 10, 1200, 2200))) {
            SplittableRandom random = new SplittableRandom(name.hashCode());
            for (int i = 0; i < 500; i++) {
                byte[] value = new byte[200 + random.nextInt(2000)];
                random.nextBytes(value);
                kv.put(("/drain/" + i).getBytes(StandardCharsets.UTF_8), value);
            }
            if (DEFERRING.contains(name)) {
                assertTrue(kv.pending().values().stream().anyMatch(n -> n > 0),
                        name + " shows nothing pending before its drain: " + kv.pending());
            }
            int forced = Drain.drain(kv, dir);
            Map<String, Long> pending = kv.pending();
            assertTrue(pending.values().stream().allMatch(n -> n == 0), name + " left " + pending + " after its drain");
            long paths;
            try (Stream<Path> walk = Files.walk(dir)) {
                paths = walk.count();
            }
            assertEquals(paths, forced, name + ": every file and directory of the store forced");
        }
    }
}
