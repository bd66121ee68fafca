package org.htod;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.StoreLockedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A salvage walks a store that opens, crashed or not, in place: read-only, under a shared lock,
 * its recovery's writes held in memory. It copied the whole file first, so that salvaging a
 * store took its size again on disk beside the new store (and the tool's own copy a third time),
 * and it copied a store that was open, and written, without a lock.
 */
class SalvageInPlaceTest {
    private static final int ENTRIES = 2_000;

    @TempDir
    Path dir;

    @Test
    void aCrashedStoreIsWalkedInPlaceWithoutACopyAndLeftAsItWas() throws Exception {
        for (boolean direct : new boolean[] {false, true}) {
            Path live = dir.resolve("live-" + direct + ".htod");
            Path crashed = dir.resolve("crashed-" + direct + ".htod");
            InstantCopyDevice dev = InstantCopyDevice.on(live);
            try (HtodStore s = Htod.builder(dev).directMode(direct).durability(Durability.NONE).open()) {
                HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
                for (int i = 0; i < ENTRIES; i++) {
                    m.put(i, "value " + i);
                }
                m.remove(7);
                s.sync();
                dev.copyTo(crashed); // what a killed process leaves: every write acknowledged is there
            }
            byte[] before = sha256(crashed);
            Path target = dir.resolve("salvaged-" + direct + ".htod");
            List<String> created = new ArrayList<>();
            CopyReport r;
            try (WatchService w = FileSystems.getDefault().newWatchService()) {
                dir.register(w, StandardWatchEventKinds.ENTRY_CREATE);
                r = Htod.salvage(crashed, target, Progress.NONE);
                WatchKey k = w.poll();
                while (k != null) {
                    for (WatchEvent<?> e : k.pollEvents()) {
                        created.add(String.valueOf(e.context()));
                    }
                    k.reset();
                    k = w.poll();
                }
            }
            assertEquals("walk", r.method(), r.toString());
            assertEquals(ENTRIES - 1, r.entries(), r.toString());
            assertArrayEquals(before, sha256(crashed), "the crashed store is left as it was (direct " + direct + ")");
            long partials = created.stream().filter(n -> n.startsWith(target.getFileName() + ".partial-")).count();
            assertEquals(1, partials, "one file written beside the new store, the new store itself before its rename,"
                    + " and no copy of the crashed one (direct " + direct + "): " + created);
            try (HtodStore s = Htod.builder(target).open()) {
                HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
                assertEquals(ENTRIES - 1, m.size());
                assertEquals("value 1999", m.get(1999));
                assertFalse(m.containsKey(7));
            }
        }
    }

    @Test
    void aStoreOpenInThisProcessIsRefusedNotCopied() throws Exception {
        Path p = dir.resolve("open.htod");
        Path target = dir.resolve("salvaged.htod");
        try (HtodStore s = Htod.builder(p).open()) {
            s.map("m", Codec.ints(), Codec.string()).put(1, "one");
            assertThrows(StoreLockedException.class, () -> Htod.salvage(p, target, Progress.NONE));
            assertFalse(Files.exists(target), "nothing salvaged from a store being written");
        }
        assertEquals("walk", Htod.salvage(p, target, Progress.NONE).method(), "once closed, it is salvaged");
    }

    private static byte[] sha256(Path p) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
    }
}
