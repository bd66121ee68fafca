package org.htod;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;

/**
 * Stores on memory devices for tests, and the verifier hook. Tests that open stores register
 * them with {@link org.htod.testkit.VerifyStores}, which verifies each after the test.
 */
final class TestStores {
    private TestStores() {}

    static int scale() {
        return Integer.getInteger("htod.test.scale", 1);
    }

    /** A builder with a small grain and a small log region (memory devices are sparse), fit for many small stores. */
    static Htod.Builder small(BlockDevice dev) {
        return small(Htod.builder(dev));
    }

    /** {@code b} with a small grain and a small log region (memory devices are sparse), durability NONE. */
    static Htod.Builder small(Htod.Builder b) {
        return b.grain(64).logSize(1 << 20).durability(Durability.NONE);
    }

    static HtodStore memory() {
        return small(new MemoryDevice()).open();
    }

    /** A small store in memory, verified after the test. */
    static HtodStore memory(OpenedStores stores) {
        return stores.open(new MemoryDevice(), TestStores::small);
    }

    /** A new, absent file under the test directory ({@code htod.test.dir}, else the system's temp directory). */
    static Path tempFile(String prefix) {
        try {
            Path dir = Path.of(System.getProperty("htod.test.dir", System.getProperty("java.io.tmpdir")));
            Files.createDirectories(dir);
            Path f = Files.createTempFile(dir, prefix, ".htod");
            Files.delete(f);
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void delete(Path f) {
        try {
            Files.deleteIfExists(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Verifies every table of {@code store}: chains, CRCs, counts and no leaked block. */
    static void verify(HtodStore store) {
        VerifyReport r = store.verify();
        if (!r.ok()) {
            throw new AssertionError("the store does not verify: " + r);
        }
    }
}
