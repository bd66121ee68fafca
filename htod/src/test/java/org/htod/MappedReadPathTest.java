package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A store in a file, its reads served from mappings of the file ({@link Htod.Builder#mapReads}):
 * the same answers as the model across growth, doublings and reopens, and nothing left mapped once
 * it is closed.
 */
class MappedReadPathTest {
    /** One run: log or direct mode, entry cache off (every get reads the device), small, or large enough to keep entries whole. */
    private record Config(boolean direct, long cache, int keySpace) {}

    @Test
    void randomOperationsOnAMappedFileMatchAHashMap() {
        Config[] configs = {new Config(false, 0, 400), new Config(true, 0, 400), new Config(false, 16 << 10, 6000),
            new Config(true, 64 << 20, 6000)};
        for (int i = 0; i < configs.length; i++) {
            long seed = 0x3A9_1000L + i;
            Path f = TestStores.tempFile("mapped");
            try {
                run(seed, configs[i], f, 12_000 * TestStores.scale());
            } catch (Throwable e) {
                throw new AssertionError("seed=0x" + Long.toHexString(seed) + " " + configs[i] + ": " + e, e);
            } finally {
                TestStores.delete(f);
            }
        }
    }

    private static void run(long seed, Config c, Path f, int ops) {
        SplittableRandom r = new SplittableRandom(seed);
        Map<String, String> model = new HashMap<>();
        HtodStore store = open(f, c);
        try {
            HtodMap<String, String> m = store.map("random", Codec.string(), Codec.string());
            for (int op = 0; op < ops; op++) {
                if (r.nextInt(3000) == 0) {
                    TestStores.verify(store);
                    store.close();
                    store = open(f, c);
                    m = store.map("random", Codec.string(), Codec.string());
                    assertEquals(model.size(), m.size(), "size after reopen");
                }
                HtodMapRandomOpsTest.step(r, m, model, c.keySpace(), 40, true);
            }
            assertEquals(model, new HashMap<>(m));
            TestStores.verify(store);
        } finally {
            store.close();
        }
    }

    private static HtodStore open(Path f, Config c) {
        return Htod.builder(f).grain(64).logSize(1 << 20).durability(Durability.NONE).directMode(c.direct())
                .modeAsStored(false).cacheSize(c.cache()).mapReads(true).open();
    }

    @Test
    void aClosedStoreLeavesNothingMappedAndItsFileCanBeDeleted() throws IOException {
        Path maps = Path.of("/proc/self/maps");
        assumeTrue(Files.isReadable(maps), "needs /proc/self/maps");
        assumeTrue(Runtime.version().feature() < 24, "no mapped reads on Java 24 and later");
        Path f = TestStores.tempFile("unmapped");
        try {
            try (HtodStore s = Htod.builder(f).cacheSize(0).open()) {
                HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
                for (int i = 0; i < 2000; i++) {
                    m.put("k" + i, "v".repeat(i % 900));
                }
            }
            String name = f.toAbsolutePath().toRealPath().toString();
            try (HtodStore s = Htod.builder(f).cacheSize(0).open()) {
                HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
                for (int i = 0; i < 2000; i++) {
                    assertEquals("v".repeat(i % 900), m.get("k" + i));
                }
                assertTrue(Files.readString(maps).contains(name), "the reopened store's reads are mapped");
            }
            assertFalse(Files.readString(maps).contains(name), "still mapped after close");
            Files.delete(f);
            assertFalse(Files.exists(f));
        } finally {
            TestStores.delete(f);
        }
    }
}
