package org.htod.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.EntryTooLargeException;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The smaller integrity faults: a refused open that writes, errors that are not typed, a misused
 * {@code compute} and a close racing a doubling that leave the store unsound.
 */
class IntegrityEdgeCasesTest {

    private static HtodStore store(MemoryDevice dev, Durability d) {
        return Images.builder(dev).createIfMissing(true).logSize(1 << 20).grain(64).durability(d).open();
    }

    @Test
    void truncatedStoreFileIsRefusedAndLeftAsItWas(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("truncated.htod");
        try (HtodStore s = Htod.builder(file).logSize(1 << 20).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 400; i++) {
                m.put("k" + i, "v" + i);
            }
        }
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
            c.truncate(8192 + 100); // the superblocks and the first bytes of the heap's checkpoint
        }
        byte[] before = Files.readAllBytes(file);
        assertThrows(HtodException.class, () -> Htod.builder(file).createIfMissing(false).open().close());
        assertArrayEquals(before, Files.readAllBytes(file), "the refused open changed the file");
    }

    @Test
    void tooLongMapNameIsATypedErrorAndLeaksNoBlock() {
        try (HtodStore s = store(new MemoryDevice(), Durability.NONE)) {
            s.map("kept", Codec.string(), Codec.string()).put("k", "v");
            assertThrows(HtodException.class, () -> s.map("n".repeat(70_000), Codec.string(), Codec.string()));
            assertEquals(List.of("kept"), s.mapNames());
            assertTrue(s.verify().ok(), s.verify().toString());
        }
    }

    @Test
    void hugeTimeToLiveIsAcceptedAndTheEntryLives() {
        try (HtodStore s = store(new MemoryDevice(), Durability.NONE)) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put("k", "v", Duration.ofSeconds(Long.MAX_VALUE));
            assertEquals("v", m.get("k"));
        }
    }

    @Test
    void entryTooLargeIsAnHtodException() {
        assertTrue(HtodException.class.isAssignableFrom(EntryTooLargeException.class),
                "EntryTooLargeException must be one of the typed errors");
        try (HtodStore s = store(new MemoryDevice(), Durability.NONE)) {
            HtodMap<byte[], byte[]> m = s.map("m", Codec.bytes(), Codec.bytes());
            assertThrows(HtodException.class, () -> m.put(new byte[Htod.MAX_KEY_BYTES + 1], new byte[1]));
            assertTrue(s.verify().ok(), s.verify().toString());
        }
    }

    @Test
    void computeThatWritesItsOwnKeyIsRefusedAndLeavesTheStoreSound() {
        MemoryDevice dev = new MemoryDevice();
        Map<String, String> model = new HashMap<>();
        try (HtodStore s = store(dev, Durability.SYNC)) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 100; i++) {
                m.put("k" + i, "v" + i);
                model.put("k" + i, "v" + i);
            }
            assertThrows(RuntimeException.class, () -> m.compute("k5", (k, old) -> {
                m.put("k5", "inner");
                return "outer";
            }), "a compute function that writes its own key must be refused");
            assertTrue(Set.of("v5", "inner", "outer").contains(m.get("k5")), "k5 holds " + m.get("k5"));
            model.put("k5", m.get("k5"));
            for (int i = 100; i < 400; i++) { // reuses what was freed: a block freed twice is handed out twice
                m.put("k" + i, "w".repeat(i % 50));
                model.put("k" + i, "w".repeat(i % 50));
            }
            assertTrue(s.verify().ok(), s.verify().toString());
            assertEquals(model, new HashMap<>(m));
        }
        try (HtodStore s = Images.builder(dev.reopen()).open()) {
            assertTrue(s.verify().ok(), s.verify().toString());
            assertEquals(model, new HashMap<>(s.map("m", Codec.string(), Codec.string())));
        }
    }

    /**
     * A close that lands while a put starts a doubling: the new bucket array must be freed or
     * recorded, never left allocated and unreachable in a store marked clean. The race is run
     * many times; the put may fail with a typed error (the store closed under it).
     */
    @Test
    void closeRacingTheStartOfADoublingLeaksNoBlock() throws Exception {
        for (int round = 0; round < 200; round++) {
            MemoryDevice dev = new MemoryDevice();
            HtodStore s = store(dev, Durability.NONE);
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 48; i++) { // 64 buckets at load 0.75: the 49th entry doubles
                m.put("k" + i, "v");
            }
            java.util.concurrent.atomic.AtomicReference<Throwable> untyped = new java.util.concurrent.atomic.AtomicReference<>();
            Thread putter = new Thread(() -> {
                try {
                    m.put("k48", "v");
                } catch (HtodException closedUnderIt) {
                    // the store closed in the middle of the put: a typed error is its answer
                } catch (Throwable t) {
                    untyped.set(t);
                }
            });
            putter.start();
            while (m.size() < 49 && putter.isAlive()) {
                Thread.onSpinWait();
            }
            try {
                s.close();
            } catch (HtodException unclean) {
                // then the next open recovers, which frees what no map reaches
            }
            putter.join();
            assertEquals(null, untyped.get(), "round " + round + ": the put failed with an error that is not typed");
            try (HtodStore again = Images.builder(dev.reopen()).open()) {
                assertTrue(again.verify().ok(), "round " + round + ": " + again.verify());
            }
        }
    }
}
