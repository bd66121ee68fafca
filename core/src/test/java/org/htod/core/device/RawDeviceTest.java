package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
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

    /**
     * Requests that span several 1 MiB transfers, from four threads at once, against the bytes
     * written, while counting the direct buffers the JVM holds: transfers take their aligned
     * buffers from a pool and give them back. One allocated per transfer, as before, made hundreds
     * here (308 in one run, the rest of the 1,200 already collected), freed only when the collector
     * got to them: a JVM in a memory cgroup was killed for them.
     */
    @Test
    void transfersSpanningSeveralBuffersShareAPoolOfThem() throws InterruptedException {
        long seed = System.nanoTime();
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(p -> p.getName().equals("direct")).findFirst().orElseThrow();
        try (RawDevice d = openOrSkip(file, 1 << 26)) {
            byte[] model = new byte[3 << 20];
            new SplittableRandom(seed).nextBytes(model);
            d.write(100, ByteBuffer.wrap(model)); // unaligned: its first and last blocks read, changed and written
            long before = direct.getCount();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            Thread[] readers = new Thread[4];
            for (int t = 0; t < readers.length; t++) {
                SplittableRandom r = new SplittableRandom(seed + t + 1);
                readers[t] = new Thread(() -> {
                    try {
                        for (int i = 0; i < 300; i++) {
                            int len = 1 + r.nextInt(r.nextInt(4) == 0 ? 2 << 20 : 9000);
                            int at = r.nextInt(model.length - len + 1);
                            ByteBuffer back = ByteBuffer.allocate(len);
                            d.read(100 + at, back);
                            assertArrayEquals(java.util.Arrays.copyOfRange(model, at, at + len), back.array(),
                                    "read " + len + " at " + (100 + at) + ", seed=" + seed);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                readers[t].start();
            }
            for (Thread t : readers) {
                t.join();
            }
            assertTrue(failures.isEmpty(), "seed=" + seed + ": " + failures);
            long made = direct.getCount() - before;
            assertTrue(made <= 16, "1,200 reads made " + made + " direct buffers, a pool holds 16; seed=" + seed);
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
    @SuppressWarnings("try") // the device is held open, not used: its lock is what is tried
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
