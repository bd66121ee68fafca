package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.htod.core.device.FileDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A copy or compaction into a store's name that dies leaves its unfinished file beside the store
 * ({@code NAME.partial-HEX}), as large as the copy had grown: the next open of the store deletes
 * it, and nothing else.
 */
class LeftoverFilesTest {

    @Test
    @SuppressWarnings("try") // the copy's device is held open, not used: that is what makes the copy live
    void anOpenDeletesWhatADeadCopyLeftAndKeepsWhatALiveCopyHolds(@TempDir Path dir) throws Exception {
        Path store = dir.resolve("s.htod");
        try (HtodStore s = Htod.builder(store).open()) {
            s.map("m", Codec.string(), Codec.string()).put("k", "v");
        }
        Path dead = dir.resolve("s.htod.partial-1a2b3c4d");
        Files.write(dead, new byte[64 << 10]);
        Path live = dir.resolve("s.htod.partial-5e6f");
        Path notOurs = dir.resolve("s.htod.partial-notes");
        Files.writeString(notOurs, "a file of someone else's that only looks alike");
        Path otherStore = dir.resolve("t.htod.partial-abc");
        Files.write(otherStore, new byte[4096]);
        try (FileDevice copying = FileDevice.open(live)) { // a copy into this name, going on
            try (HtodStore s = Htod.builder(store).open()) {
                assertEquals("v", s.map("m", Codec.string(), Codec.string()).get("k"));
            }
            assertFalse(Files.exists(dead), "a leftover no one holds is deleted");
            assertTrue(Files.exists(live), "a copy going on keeps its file");
        }
        assertTrue(Files.exists(notOurs), "a name that is not a leftover's is kept");
        assertTrue(Files.exists(otherStore), "another store's leftover is that store's business");
        try (HtodStore s = Htod.builder(store).open()) {
            assertEquals(1, s.map("m", Codec.string(), Codec.string()).size());
        }
        assertFalse(Files.exists(live), "once its copy is gone, the next open deletes it");
    }
}
