package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.htod.core.StoreLockedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FileDeviceTest {
    private Path file;

    @BeforeEach
    void newFile() throws IOException {
        file = Files.createTempFile(DeviceContractTests.testDir(), "file-device", ".htod");
    }

    @AfterEach
    void deleteFile() throws IOException {
        Files.deleteIfExists(file);
    }

    @Test
    void piecesEndAtTheNextMultipleOfThePieceSizeOrAtTheEnd() {
        int p = FileDevice.PIECE;
        assertEquals(p, FileDevice.pieceEnd(0, 10L * p));
        assertEquals(100, FileDevice.pieceEnd(0, 100));
        assertEquals(p, FileDevice.pieceEnd(p - 1, 3L * p));
        assertEquals(2L * p, FileDevice.pieceEnd(p, 3L * p));
        assertEquals(5L * p + 7, FileDevice.pieceEnd(5L * p + 3, 5L * p + 7));
    }

    /** Writes cut into pieces at 64 KiB boundaries land whole: every byte where it belongs, none beside. */
    @Test
    void writesAcrossPieceBoundariesLandWholeInBothChannels() {
        java.util.Random r = new java.util.Random(0x91ECEL);
        int p = FileDevice.PIECE;
        byte[] model = new byte[6 * p];
        try (FileDevice d = FileDevice.open(file)) {
            d.write(0, ByteBuffer.wrap(model.clone()));
            int[][] writes = {{p - 3, 7}, {1, 3 * p + 5}, {2 * p, p}, {p + 11, 2 * p}, {0, 6 * p}, {5 * p - 1, p + 1}};
            for (int i = 0; i < writes.length; i++) {
                int at = writes[i][0];
                byte[] b = new byte[writes[i][1]];
                r.nextBytes(b);
                ByteBuffer src = ByteBuffer.wrap(b);
                if (i % 2 == 0) {
                    d.write(at, src);
                } else {
                    d.writeDurable(at, src);
                }
                assertEquals(b.length, src.position(), "the buffer is consumed");
                assertEquals(b.length, src.limit(), "and its limit left as it was");
                System.arraycopy(b, 0, model, at, b.length);
                ByteBuffer back = ByteBuffer.allocate(model.length);
                d.read(0, back);
                assertArrayEquals(model, back.array(), "after write " + i + " of " + b.length + " bytes at " + at);
            }
        }
    }

    @Test
    void aSecondOpenInTheSameProcessIsRefusedUntilTheFirstCloses() {
        FileDevice first = FileDevice.open(file);
        StoreLockedException e = assertThrows(StoreLockedException.class, () -> FileDevice.open(file));
        assertTrue(e.getMessage().contains(file.toString()), "names the file: " + e.getMessage());
        first.close();
        FileDevice.open(file).close();
    }

    @Test
    @SuppressWarnings("try") // the device is held open, not used: its lock is what is tried
    void anOpenInAnotherProcessIsRefused() throws Exception {
        try (FileDevice held = FileDevice.open(file)) {
            // A refused second open in this process must not drop the lock (closing any descriptor
            // of the file would, on Linux), so the other process is still kept out after it.
            assertThrows(StoreLockedException.class, () -> FileDevice.open(file));
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), OpenFromAnotherProcess.class.getName(), file.toString())
                    .redirectErrorStream(true).start();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child process finished");
            String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertTrue(out.startsWith("StoreLockedException"), "child said: " + out);
            assertTrue(out.contains(file.toString()), "and named the file: " + out);
        }
    }

    /** Run in a child JVM by the test above: tries to open the file and says what happened. */
    public static final class OpenFromAnotherProcess {
        @SuppressWarnings("try") // opened only to see whether it can be
        public static void main(String[] args) {
            try (FileDevice d = FileDevice.open(Path.of(args[0]))) {
                System.out.println("opened");
            } catch (RuntimeException e) {
                System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }

    @Test
    void offsetsPastFourAndEightGigabytesWork() {
        try (FileDevice d = FileDevice.open(file)) {
            long[] offsets = {(1L << 32) - 3, (1L << 32) + 12_345, (1L << 33) + 7};
            for (long at : offsets) {
                byte[] data = ("at " + at).getBytes(StandardCharsets.UTF_8);
                d.write(at, ByteBuffer.wrap(data));
                ByteBuffer back = ByteBuffer.allocate(data.length);
                d.read(at, back);
                assertArrayEquals(data, back.array(), "at offset " + at);
            }
            assertEquals((1L << 33) + 7 + ("at " + ((1L << 33) + 7)).length(), d.size());
            ByteBuffer hole = ByteBuffer.allocate(4096);
            d.read(1L << 31, hole);
            assertArrayEquals(new byte[4096], hole.array(), "a hole in a sparse file reads as zeros");
        }
    }
}
