package org.htod.bench.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import org.htod.bench.TestDirs;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.bench.DrainedPass;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link HashtableBenchmark} measures the table in direct mode, as its comment and the README say. */
class HashtableBenchmarkTest {

    private TestDirs dirs;

    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dirs = TestDirs.create("hashtable-").asBenchDir();
        dir = dirs.path();
    }

    @AfterEach
    void removeDir() {
        dirs.close();
    }

    private static HashtableBenchmark bench() {
        HashtableBenchmark b = new HashtableBenchmark();
        b.entries = 2_000;
        b.valueSize = 100;
        return b;
    }

    @Test
    void measuresDirectMode() throws IOException {
        HashtableBenchmark b = bench();
        b.setUp();
        try {
            assertTrue(b.directMode(), "the hashtable benchmark's store is in log mode, not direct mode");
            assertNotNull(b.get(new HashtableBenchmark.Io()));
        } finally {
            b.tearDown();
        }
    }

    @Test
    void replacesAStoreLeftInLogMode() throws IOException {
        Path file = dir.resolve("hashtable-2000-100.htod");
        try (HtodStore s = Htod.builder(file).durability(Durability.NONE).open()) {
            s.map("bench", Codec.bytes(), Codec.bytes()).put(new byte[] {1}, new byte[] {2});
        }
        HashtableBenchmark b = bench();
        b.setUp();
        try {
            assertTrue(b.directMode());
            HashtableBenchmark.Io io = new HashtableBenchmark.Io();
            assertNotNull(b.get(io));
            assertEquals(1, io.ops);
        } finally {
            b.tearDown();
        }
    }

    @Test
    void eachIterationOfWritesEndsSynced() throws IOException {
        HashtableBenchmark b = bench();
        b.setUp();
        try {
            DrainedPass pass = new DrainedPass();
            HashtableBenchmark.Io io = new HashtableBenchmark.Io();
            b.beginPass(pass);
            for (int i = 0; i < 50; i++) {
                b.put(io, pass, null);
                b.removeAndPut(io, pass, null);
            }
            long syncsBefore = b.deviceSyncs();
            b.drainPass(pass);
            assertTrue(b.deviceSyncs() > syncsBefore, "the iteration ended without syncing the store");
            assertEquals(100, pass.last().ops());
            assertTrue(pass.last().nanos() >= pass.last().drainNanos() && pass.last().drainNanos() > 0);
        } finally {
            b.tearDown();
        }
    }
}
