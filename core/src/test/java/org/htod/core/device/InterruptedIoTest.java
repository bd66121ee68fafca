package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A thread interrupted during I/O closes a {@code FileChannel}, and with it, before, the store for
 * every thread (a cancelled task in a web server, an executor shut down). The file devices now
 * keep a pending interrupt away from the channel and give it back to the thread after, and open
 * the file again, its lock taken again, when an interrupt closed it during a transfer, which they
 * then repeat. Over {@link FileDevice} and {@link RawDevice} (where the file system takes
 * O_DIRECT).
 */
class InterruptedIoTest {
    private Path file;

    @BeforeEach
    void newFile() throws IOException {
        file = Files.createTempFile(DeviceContractTests.testDir(), "interrupted", ".htod");
    }

    @AfterEach
    void deleteFile() throws IOException {
        Files.deleteIfExists(file);
    }

    private BlockDevice open(boolean raw) {
        return raw ? RawDeviceTest.openOrSkip(file, 1 << 26) : FileDevice.open(file);
    }

    private static LockedChannel held(BlockDevice d) {
        return d instanceof FileDevice f ? f.held() : ((RawDevice) d).held();
    }

    @ParameterizedTest(name = "raw {0}")
    @ValueSource(booleans = {false, true})
    void anInterruptPendingAtATransferClosesNothingAndIsKept(boolean raw) {
        try (BlockDevice d = open(raw)) {
            byte[] data = pattern(4096, 7);
            List<String> ops = List.of("write", "write durable", "read", "sync", "size");
            for (String op : ops) {
                Thread.currentThread().interrupt();
                switch (op) {
                    case "write" -> d.write(0, ByteBuffer.wrap(data));
                    case "write durable" -> d.writeDurable(4096, ByteBuffer.wrap(data));
                    case "read" -> {
                        ByteBuffer b = ByteBuffer.allocate(4096);
                        d.read(0, b);
                        assertArrayEquals(data, b.array(), "read back");
                    }
                    case "sync" -> d.sync();
                    default -> assertEquals(8192, d.size());
                }
                assertTrue(Thread.interrupted(), op + ": the thread's interrupt, kept for it");
            }
            assertEquals(0, held(d).reopens(), "no channel was closed");
        } finally {
            Thread.interrupted();
        }
    }

    /**
     * What an interrupt during a transfer does, made sure: the channel closed under the device.
     * The next transfer opens it again and takes the file's lock again, which the close dropped
     * (POSIX record locks belong to the process and the file: closing any descriptor of the file
     * drops them), as {@code /proc/locks} shows where the system has one.
     */
    @ParameterizedTest(name = "raw {0}")
    @ValueSource(booleans = {false, true})
    void aChannelClosedUnderTheDeviceIsOpenedAgainWithTheFileLock(boolean raw) throws IOException {
        try (BlockDevice d = open(raw)) {
            LockedChannel held = held(d);
            byte[] data = pattern(4096, 3);
            d.write(0, ByteBuffer.wrap(data));
            d.sync();
            assertTrue(locked(), "locked at open");

            held.channel().close();
            d.sync(); // through the main channel (a read may be served from a mapping)
            ByteBuffer b = ByteBuffer.allocate(4096);
            d.read(0, b);
            assertArrayEquals(data, b.array(), "read after the channel was opened again");
            assertEquals(1, held.reopens());
            assertTrue(locked(), "the file locked again");
            d.write(4096, ByteBuffer.wrap(data));
            d.sync();

            if (d instanceof FileDevice f) {
                held.extra(0).close(); // the O_DSYNC descriptor
                d.writeDurable(8192, ByteBuffer.wrap(data));
                assertEquals(2, held.reopens());
                assertTrue(locked(), "the file locked again, after its O_DSYNC descriptor closed");
                if (f.mappedBytes() > 0) {
                    held.extra(1).close(); // the read-only one the mappings are made through
                    long far = 4L << 20; // far enough past the mapped bytes that a read there maps again
                    d.write(far, ByteBuffer.wrap(data));
                    long mapped = f.mappedBytes();
                    ByteBuffer there = ByteBuffer.allocate(4096);
                    d.read(far, there);
                    assertArrayEquals(data, there.array());
                    assertTrue(f.mappedBytes() > mapped, "mapped again, through the read-only descriptor opened again");
                    assertEquals(3, held.reopens());
                    assertTrue(locked(), "the file locked again, after its read-only descriptor closed");
                }
            }
            ByteBuffer all = ByteBuffer.allocate(4096);
            d.read(4096, all);
            assertArrayEquals(data, all.array());
        }
    }

    /**
     * A channel closed under the device when the file cannot be opened again (here it was
     * removed): the device stops, rather than go on half open and unlocked, and says so on every
     * later call.
     */
    @ParameterizedTest(name = "raw {0}")
    @ValueSource(booleans = {false, true})
    void aFileThatCannotBeOpenedAgainStopsTheDevice(boolean raw) throws IOException {
        try (BlockDevice d = open(raw)) {
            d.write(0, ByteBuffer.wrap(pattern(4096, 1)));
            Files.delete(file);
            held(d).channel().close();
            org.junit.jupiter.api.Assertions.assertThrows(org.htod.core.HtodIOException.class,
                    () -> d.write(8192, ByteBuffer.wrap(pattern(4096, 3))), "the reopen fails");
            org.htod.core.StoreLockedException later = org.junit.jupiter.api.Assertions.assertThrows(
                    org.htod.core.StoreLockedException.class, () -> d.write(4096, ByteBuffer.wrap(pattern(4096, 2))));
            assertTrue(later.getMessage().contains("could not be opened again"), later.getMessage());
        }
    }

    /**
     * Threads writing, reading back, syncing, interrupted every few tens of microseconds by
     * another: none of them sees an error, every read finds what its thread wrote, each keeps
     * the interrupts it was sent, and the file is still locked.
     */
    @ParameterizedTest(name = "raw {0}")
    @ValueSource(booleans = {false, true})
    void threadsInterruptedDuringTheirIoLoseNothing(boolean raw) throws Exception {
        long seed = System.nanoTime();
        int rounds = 2_000 * Integer.getInteger("htod.test.scale", 1);
        try (BlockDevice d = open(raw)) {
            AtomicReference<Throwable> failed = new AtomicReference<>();
            AtomicLong interruptsSeen = new AtomicLong();
            List<Thread> workers = new ArrayList<>();
            // On a file, a fourth worker grows it, so that its reads map it again and again through
            // the read-only descriptor, which interrupts close too.
            for (int w = 0; w < (raw ? 3 : 4); w++) {
                int id = w;
                boolean grows = id == 3;
                workers.add(new Thread(() -> {
                    SplittableRandom r = new SplittableRandom(seed + id);
                    long base = id * (1L << 24);
                    try {
                        for (int i = 0; i < rounds && failed.get() == null; i++) {
                            int block = grows ? i * 16 : r.nextInt(64);
                            byte[] data = pattern(4096, r.nextInt());
                            long at = base + block * 4096L;
                            if (r.nextInt(4) == 0) {
                                d.writeDurable(at, ByteBuffer.wrap(data));
                            } else {
                                d.write(at, ByteBuffer.wrap(data));
                            }
                            if (r.nextInt(8) == 0) {
                                d.sync();
                            }
                            ByteBuffer b = ByteBuffer.allocate(4096);
                            d.read(at, b);
                            assertArrayEquals(data, b.array(), "block " + block + " of worker " + id + ", round " + i);
                            if (Thread.interrupted()) {
                                interruptsSeen.incrementAndGet();
                            }
                        }
                    } catch (Throwable t) {
                        failed.compareAndSet(null, t);
                    }
                }, "worker-" + w));
            }
            long sent = Interrupter.runInterrupting(workers, seed, 20, 100);
            System.out.println("InterruptedIoTest (raw " + raw + ", seed " + seed + "): " + sent
                    + " interrupts sent, " + interruptsSeen.get() + " seen by the workers after their transfers, "
                    + held(d).reopens() + " channels opened again");
            if (failed.get() != null) {
                throw new AssertionError("seed " + seed + ": a worker failed", failed.get());
            }
            assertTrue(interruptsSeen.get() > 0, "the workers were interrupted, and kept the interrupts");
            if (Files.isReadable(Path.of("/proc/locks"))) {
                assertTrue(locked(), "the file still locked, after " + held(d).reopens() + " channels opened again");
            }
            if (d instanceof FileDevice f && MappedReads.supported()) {
                assertTrue(f.mappedBytes() > (3L << 24), "the growing worker's reads were mapped");
            }
        }
    }

    /** Whether {@code /proc/locks} lists a POSIX lock of this process on the file (the test is skipped without it). */
    private boolean locked() throws IOException {
        return ProcLocks.lockedByThisProcess(file);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }
}
