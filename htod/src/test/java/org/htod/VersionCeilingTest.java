package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A key put with version {@code Long.MAX_VALUE}, then put again without a version: its version
 * stays at the ceiling, so no older versioned put wins, and a copy takes it. The next version was
 * the sum, which wrapped to {@code Long.MIN_VALUE}: a versioned put of version 1 then replaced the
 * newest value, and a copy (and so a compaction and an export) refused the entry.
 */
class VersionCeilingTest {
    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aPutAtTheHighestVersionKeepsItAndOlderVersionsStillLose(boolean direct) throws Exception {
        try (HtodStore s = TestStores.small(new MemoryDevice()).directMode(direct).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.putVersioned("k", "last", Long.MAX_VALUE);
            m.put("k", "after");
            assertEquals(Long.MAX_VALUE, m.version("k"));
            m.putAll(java.util.Map.of("k", "all"));
            assertEquals(Long.MAX_VALUE, m.version("k"));
            assertFalse(m.putVersioned("k", "stale", 1), "an older version loses");
            assertEquals("all", m.get("k"));
            if (!direct) {
                s.batch().put(m, "k", "batched").commit();
                assertEquals(Long.MAX_VALUE, m.version("k"));
                s.checkpoint(); // installed: the tables' path too
                m.put("k", "installed");
                s.checkpoint();
                assertEquals(Long.MAX_VALUE, m.version("k"));
                Path copy = TestStores.tempFile("version-ceiling-copy");
                TestStores.delete(copy);
                try {
                    s.copyTo(copy, Progress.NONE);
                    try (HtodStore c = Htod.builder(copy).open()) {
                        HtodMap<String, String> cm = c.map("m", Codec.string(), Codec.string());
                        assertEquals("installed", cm.get("k"));
                        assertEquals(Long.MAX_VALUE, cm.version("k"));
                    }
                } finally {
                    TestStores.delete(copy);
                }
            }
        }
    }
}
