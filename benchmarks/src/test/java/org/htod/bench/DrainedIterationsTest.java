package org.htod.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import org.htod.bench.store.Durability;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The throughput write benchmarks end each iteration drained: their iteration setups and teardowns,
 * called as JMH calls them, count every operation into the iteration's pass and leave the store
 * with nothing pending after it, where the same operations undrained leave work pending.
 */
class DrainedIterationsTest {

    private TestDirs dirs;

    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dirs = TestDirs.create("drained-").asBenchDir();
        dir = dirs.path();
    }

    @AfterEach
    void removeDir() {
        dirs.close();
    }

    private static boolean nonePending(Map<String, Long> pending) {
        return pending.values().stream().allMatch(n -> n == 0);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"htod-log", "rocksdb", "sqlite"})
    void durablePutsEndEachIterationDrained(String store) {
        DurablePutBenchmark bench = new DurablePutBenchmark();
        DurablePutBenchmark.Target t = new DurablePutBenchmark.Target();
        t.store = store;
        t.valueSize = 200;
        t.keySpace = 1000;
        t.open();
        try {
            DurablePutBenchmark.Writer w = new DurablePutBenchmark.Writer();
            DrainedPass pass = new DrainedPass();
            w.random = new SplittableRandom(1);
            for (int iteration = 0; iteration < 2; iteration++) {
                t.beginPass(pass);
                for (int i = 0; i < 300; i++) {
                    bench.put(t, w, pass, null);
                }
                assertTrue(!nonePending(t.kv.pending()), store + " shows nothing pending before the drain");
                t.drainPass(pass);
                assertTrue(nonePending(t.kv.pending()), store + " left " + t.kv.pending() + " after the iteration");
                assertEquals(300, pass.last().ops());
                assertTrue(pass.last().drainNanos() > 0 && pass.last().nanos() > pass.last().drainNanos());
            }
        } finally {
            t.closeAndDelete(1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"htod", "rocksdb", "sqlite"})
    void replacementsEndEachIterationDrained(String store) {
        LoadedStore s = new LoadedStore();
        s.store = store;
        s.corpus = "olympic";
        s.durability = Durability.NONE;
        s.objects = 300;
        s.load();
        try {
            assertTrue(nonePending(s.kv.pending()), store + " loaded with " + s.kv.pending() + " pending");
            ReplaceBenchmark bench = new ReplaceBenchmark();
            ReplaceBenchmark.Live live = new ReplaceBenchmark.Live();
            live.init(s);
            DrainedPass pass = new DrainedPass();
            bench.beginPass(s, pass);
            for (int i = 0; i < 200; i++) {
                bench.replace(s, live, pass, null);
            }
            assertTrue(!nonePending(s.kv.pending()), store + " shows nothing pending before the drain");
            bench.drainPass(pass);
            assertTrue(nonePending(s.kv.pending()), store + " left " + s.kv.pending() + " after the iteration");
            assertEquals(200, pass.last().ops());
        } finally {
            s.tearDown();
        }
    }
}
