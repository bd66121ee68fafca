package org.htod.bench.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.htod.bench.TestDirs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Gets from several threads at once on one store, as {@code ConcurrentReadBenchmark} and {@code
 * ReadThreadsBenchmark} make them: every adapter answers each get with the key's own value, so
 * that those benchmarks measure every store rather than fail for some or read wrong objects.
 */
class ConcurrentGetsTest {

    private static final int OBJECTS = 300;
    private static final int THREADS = 4;
    private static final int GETS = 3_000;

    private TestDirs dirs;

    private Path dir;

    static Stream<String> stores() {
        return Stores.names().stream();
    }

    @BeforeEach
    void makeDir() throws IOException {
        dirs = TestDirs.create("concurrent-gets-");
        dir = dirs.path();
    }

    @AfterEach
    void removeDir() {
        dirs.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void everyThreadReadsItsOwnKeysValue(String name) throws Exception {
        byte[][] keys = new byte[OBJECTS][];
        byte[][] values = new byte[OBJECTS][];
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < OBJECTS; i++) {
            keys[i] = ("/olympics/day01/rowing/results-" + i + ".html").getBytes(StandardCharsets.UTF_8);
            values[i] = new byte[100 + rnd.nextInt(6000)];
            rnd.nextBytes(values[i]);
        }
        SizingHint hint = new SizingHint(OBJECTS, 40, 3200, 6100);
        try (KeyValueStore store = Stores.open(name, dir.resolve(name), Durability.NONE, hint)) {
            for (int i = 0; i < OBJECTS; i++) {
                store.put(keys[i], values[i]);
            }
            store.flush();
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                List<Future<String>> results = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    long seed = t;
                    results.add(pool.submit(() -> {
                        SplittableRandom r = new SplittableRandom(seed);
                        int wrong = 0;
                        String first = null;
                        for (int n = 0; n < GETS; n++) {
                            int i = r.nextInt(OBJECTS);
                            try {
                                if (!Arrays.equals(values[i], store.get(keys[i]))) {
                                    wrong++;
                                }
                            } catch (RuntimeException e) {
                                wrong++;
                                if (first == null) {
                                    first = e.toString();
                                }
                            }
                        }
                        return wrong == 0 ? "" : wrong + " of " + GETS + " gets wrong" + (first == null ? "" : ", first: " + first);
                    }));
                }
                List<String> failures = new ArrayList<>();
                for (Future<String> f : results) {
                    String s = f.get();
                    if (!s.isEmpty()) {
                        failures.add(s);
                    }
                }
                assertEquals(List.of(), failures, name + " under " + THREADS + " concurrent readers");
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
