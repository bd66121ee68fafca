package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An offline compaction and a copy keep the store's mode: a direct-mode store stays one, and
 * opens with {@code directMode(true)} afterwards. Both created the new store in log mode, so the
 * compacted store refused {@code directMode(true)} ("a log-mode store") from then on.
 */
class OfflineCopyModeTest {
    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aCompactionAndACopyKeepTheStoresMode(boolean direct) throws Exception {
        Path file = TestStores.tempFile("copy-mode");
        Path copy = TestStores.tempFile("copy-mode-copy");
        TestStores.delete(copy);
        try {
            try (HtodStore s = Htod.builder(file).directMode(direct).open()) {
                s.map("m", Codec.string(), Codec.string()).put("k", "v");
            }
            Htod.compact(file, Progress.NONE);
            Htod.copy(file, copy, Progress.NONE);
            for (Path p : new Path[] {file, copy}) {
                try (HtodStore s = Htod.builder(p).modeAsStored(true).open()) {
                    assertEquals(!direct, s.logged(), p + " in its mode");
                    assertEquals("v", s.map("m", Codec.string(), Codec.string()).get("k"));
                }
                if (direct) {
                    try (HtodStore s = Htod.builder(p).directMode(true).open()) {
                        assertFalse(s.logged());
                    }
                }
            }
        } finally {
            TestStores.delete(file);
            TestStores.delete(copy);
        }
    }
}
