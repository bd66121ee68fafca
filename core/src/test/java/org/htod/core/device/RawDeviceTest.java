package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.htod.core.HtodIOException;
import org.htod.core.StoreLockedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RawDeviceTest {
    private Path file;

    /** Opens {@code f} with O_DIRECT, or skips the test, saying why, where the file system refuses it. */
    static RawDevice openOrSkip(Path f, long capacity) {
        try {
            return RawDevice.open(f, capacity);
        } catch (HtodIOException e) {
            Assumptions.assumeTrue(!e.getMessage().contains("O_DIRECT"),
                    "skipped: the file system under " + f + " refuses O_DIRECT (" + e.getMessage() + ")");
            throw e;
        }
    }

    @BeforeEach
    void newFile() throws IOException {
        file = Files.createTempFile(DeviceContractTests.testDir(), "raw-device", ".htod");
    }

    @AfterEach
    void deleteFile() throws IOException {
        Files.deleteIfExists(file);
    }

    @Test
    void unalignedRequestsAreServedByReadModifyWrite() {
        long seed = System.nanoTime();
        SplittableRandom r = new SplittableRandom(seed);
        try (RawDevice d = openOrSkip(file, 1 << 24)) {
            byte[] model = new byte[1 << 20];
            d.write(0, ByteBuffer.wrap(model));
            for (int op = 0; op < 300; op++) {
                int pos = r.nextInt(model.length - 20_000);
                int len = 1 + r.nextInt(r.nextBoolean() ? 700 : 20_000);
                byte[] data = new byte[len];
                r.nextBytes(data);
                d.write(pos, ByteBuffer.wrap(data));
                System.arraycopy(data, 0, model, pos, len);
                int rp = r.nextInt(model.length - 30_000);
                int rl = 1 + r.nextInt(30_000);
                ByteBuffer back = ByteBuffer.allocate(rl);
                d.read(rp, back);
                byte[] expected = java.util.Arrays.copyOfRange(model, rp, rp + rl);
                assertArrayEquals(expected, back.array(), "read " + rl + " at " + rp + ", seed=" + seed);
            }
            assertTrue(d.sectorSize() >= 512, "block size " + d.sectorSize());
        }
    }

    @Test
    void offsetsPastFourGigabytesWork() {
        try (RawDevice d = openOrSkip(file, 10L << 30)) {
            for (long at : new long[] {(1L << 32) - 100, (1L << 32) + 4097, (1L << 33) + 3}) {
                byte[] data = ("raw at " + at).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                d.write(at, ByteBuffer.wrap(data));
                ByteBuffer back = ByteBuffer.allocate(data.length);
                d.read(at, back);
                assertArrayEquals(data, back.array(), "at " + at);
            }
        }
    }

    @Test
    void aSecondOpenIsRefused() {
        try (RawDevice d = openOrSkip(file, 1 << 20)) {
            assertThrows(StoreLockedException.class, () -> RawDevice.open(file, 1 << 20));
        }
    }

    @Test
    void aFileSystemWithoutODirectGetsAClearError() throws IOException {
        Path shm = Path.of("/dev/shm");
        Assumptions.assumeTrue(Files.isDirectory(shm), "skipped: no /dev/shm (tmpfs) on this machine to try");
        Path f = Files.createTempFile(shm, "raw", ".htod");
        try {
            RawDevice d = null;
            try {
                d = RawDevice.open(f, 1 << 20);
            } catch (HtodIOException e) {
                assertTrue(e.getMessage().contains("O_DIRECT") && e.getMessage().contains(f.toString()), e.getMessage());
                return;
            } finally {
                if (d != null) {
                    d.close();
                }
            }
            Assumptions.abort("skipped: /dev/shm accepted O_DIRECT on this machine");
        } finally {
            Files.deleteIfExists(f);
        }
    }
}
