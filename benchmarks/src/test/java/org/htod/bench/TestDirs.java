package org.htod.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.htod.bench.store.DiskUsage;

/**
 * A directory of its own for one test's stores, under {@code htod.test.dir} (default {@code
 * target/test-stores}, which the build cleans), removed with everything in it by {@link #close};
 * with {@link #asBenchDir}, also the directory the benchmarks' states create their stores in
 * ({@link StoreParams#DIR_PROPERTY}) until then.
 */
public final class TestDirs implements AutoCloseable {
    private final Path dir;
    private boolean benchDir;
    private String before;

    private TestDirs(Path dir) {
        this.dir = dir;
    }

    /** A new directory named {@code prefix} and a unique suffix. */
    public static TestDirs create(String prefix) throws IOException {
        Path base = Paths.get(System.getProperty("htod.test.dir", "target/test-stores"));
        Files.createDirectories(base);
        return new TestDirs(Files.createTempDirectory(base, prefix));
    }

    /** Makes this the benchmarks' directory until {@link #close}, which puts back the one before. */
    public TestDirs asBenchDir() {
        benchDir = true;
        before = System.setProperty(StoreParams.DIR_PROPERTY, dir.toString());
        return this;
    }

    public Path path() {
        return dir;
    }

    @Override
    public void close() {
        if (benchDir) {
            if (before == null) {
                System.clearProperty(StoreParams.DIR_PROPERTY);
            } else {
                System.setProperty(StoreParams.DIR_PROPERTY, before);
            }
        }
        DiskUsage.deleteRecursively(dir);
    }
}
