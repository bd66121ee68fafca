package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.Stream;
import org.htod.core.StoreFullException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.ForwardingDevice;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The disk fills up while a compaction or a copy writes its new store: the store's file is a real
 * file on a disk with room for {@code room} bytes of it ({@link FillingDisk}), at several points
 * of the writing. Each time the operation fails with a {@link StoreFullException} whose one-line
 * message names the file, the partial file is gone, and the source still holds every entry and
 * verifies.
 */
class CopyDiskFullTest {
    @TempDir
    Path dir;

    /** A log-mode store with many removed entries of varied sizes; returns what it holds. */
    private static Map<String, String> fragmented(Path path) {
        Map<String, String> model = new HashMap<>();
        SplittableRandom r = new SplittableRandom(7);
        try (HtodStore s = Htod.builder(path).logSize(1 << 20).durability(Durability.NONE).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 3000; i++) {
                String v = "v" + i + "-" + "x".repeat(r.nextInt(2000));
                m.put("k" + i, v);
                model.put("k" + i, v);
            }
            for (int i = 0; i < 3000; i += 2) {
                m.remove("k" + i);
                model.remove("k" + i);
            }
            s.map("empty", Codec.string(), Codec.string());
        }
        return model;
    }

    /**
     * A file on a disk with room for {@code room} bytes of it: a write that would make the file
     * larger fails as the file device reports ENOSPC ({@code LockedChannel.error}), with the
     * operating system's message as the cause. Unlike a device of that capacity, it does not say
     * so beforehand: a new store sizes its heap by the device's capacity, and a disk's free space
     * is not a capacity the store may count on.
     */
    static final class FillingDisk extends ForwardingDevice {
        private final Path path;
        private final long room;

        FillingDisk(Path path, long room) {
            super(FileDevice.open(path));
            this.path = path;
            this.room = room;
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            if (pos + src.remaining() > Math.max(room, inner.size())) {
                throw new StoreFullException("write of " + src.remaining() + " bytes at offset " + pos + " on " + path
                        + " failed: the disk is full", new IOException("No space left on device"));
            }
            inner.write(pos, src);
        }
    }

    private static Function<Path, BlockDevice> disk(long room) {
        return p -> new FillingDisk(p, room);
    }

    private List<Path> files() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    private static void checkSource(Path path, Map<String, String> model, String where) {
        try (HtodStore s = Htod.builder(path).createIfMissing(false).open()) {
            assertEquals(model, new HashMap<>(s.map("m", Codec.string(), Codec.string())), where + ": the source's entries");
            assertTrue(s.mapNames().contains("empty"), where);
            VerifyReport v = s.verify();
            assertTrue(v.ok(), where + ": the source verifies: " + v);
        }
    }

    private static void checkMessage(StoreFullException e, Path named, String where) {
        String m = e.getMessage();
        assertFalse(m.contains("\n"), where + ": one line: " + m);
        assertTrue(m.contains(named.getFileName().toString()) && m.contains("disk is full"),
                where + ": names the file and the cause: " + m);
    }

    // The sizes at which the disk fills: in the superblock and log region (the first MiB and a
    // bit), and in the heap, early and late (the compacted store takes about 3.3 MB).
    @ParameterizedTest(name = "room for {0} bytes")
    @ValueSource(longs = {4096, 1_200_000, 2_000_000, 3_000_000})
    void compactOnAFullDiskLeavesTheStoreAsItWas(long room) throws IOException {
        Path path = dir.resolve("s.htod");
        Map<String, String> model = fragmented(path);
        String where = "compact with room for " + room + " bytes";
        StoreFullException e = assertThrows(StoreFullException.class,
                () -> StoreOps.compact(path, Progress.NONE, disk(room)), where);
        checkMessage(e, path, where);
        assertEquals(List.of(path), files(), where + ": the partial file removed");
        checkSource(path, model, where);
        // With room enough, the same compaction succeeds and shrinks the store.
        CopyReport ok = StoreOps.compact(path, Progress.NONE, disk(1L << 30));
        assertTrue(ok.targetBytes() < ok.sourceBytes(), ok.toString());
        checkSource(path, model, where + ", then with room");
    }

    @ParameterizedTest(name = "room for {0} bytes")
    @ValueSource(longs = {4096, 1_200_000, 3_000_000})
    void copyOnAFullDiskLeavesNoTarget(long room) throws IOException {
        Path path = dir.resolve("s.htod");
        Path target = dir.resolve("copy.htod");
        Map<String, String> model = fragmented(path);
        String where = "copy with room for " + room + " bytes";
        StoreFullException e = assertThrows(StoreFullException.class,
                () -> StoreOps.copy(path, target, Progress.NONE, disk(room)), where);
        checkMessage(e, target, where);
        assertEquals(List.of(path), files(), where + ": no target, no partial file");
        checkSource(path, model, where);
    }

    @ParameterizedTest(name = "room for {0} bytes")
    @ValueSource(longs = {4096, 1_200_000, 3_000_000})
    void copyToOfAnOpenStoreOnAFullDiskLeavesItServing(long room) throws IOException {
        Path path = dir.resolve("s.htod");
        Path target = dir.resolve("copy.htod");
        Map<String, String> model = fragmented(path);
        String where = "copyTo with room for " + room + " bytes";
        try (HtodStore s = Htod.builder(path).createIfMissing(false).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            StoreFullException e = assertThrows(StoreFullException.class,
                    () -> s.copyTo(target, Progress.NONE, disk(room)), where);
            checkMessage(e, target, where);
            assertEquals(List.of(path), files(), where + ": no target, no partial file");
            // The store goes on serving reads and writes.
            assertEquals(model, new HashMap<>(m), where);
            m.put("after", "a");
            model.put("after", "a");
            assertTrue(s.verify().ok(), where);
        }
        checkSource(path, model, where);
    }
}
