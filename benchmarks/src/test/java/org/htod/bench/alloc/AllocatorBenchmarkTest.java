package org.htod.bench.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.htod.bench.DrainedPass;
import org.htod.bench.TestDirs;
import org.htod.core.container.StorageMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link AllocatorBenchmark}'s iterations end with the heap synced, inside their drained pass. */
class AllocatorBenchmarkTest {

    private TestDirs dirs;

    @BeforeEach
    void makeDir() throws IOException {
        dirs = TestDirs.create("alloc-").asBenchDir();
    }

    @AfterEach
    void removeDir() {
        dirs.close();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StorageMethod.class)
    void eachIterationEndsSynced(StorageMethod method) throws IOException {
        AllocatorBenchmark b = new AllocatorBenchmark();
        b.method = method;
        b.device = "file";
        b.liveObjects = 200;
        b.setUp();
        try {
            DrainedPass pass = new DrainedPass();
            AllocatorBenchmark.Io io = new AllocatorBenchmark.Io();
            b.beginPass(pass);
            for (int i = 0; i < 100; i++) {
                b.replace(io, pass, null);
            }
            long syncsBefore = b.deviceSyncs();
            assertEquals(0, io.deviceSyncs, "syncEvery 0 synced during the replacements");
            b.drainPass(pass);
            assertTrue(b.deviceSyncs() > syncsBefore, "the iteration ended without syncing the heap");
            assertEquals(100, pass.last().ops());
        } finally {
            b.tearDown();
        }
    }
}
