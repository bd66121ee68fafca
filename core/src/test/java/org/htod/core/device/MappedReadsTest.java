package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reads from mappings of a file: the same bytes as the channel's, never past the file, unmapped at close. */
class MappedReadsTest {
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);
    private Path file;

    @BeforeEach
    void newFile() throws IOException {
        file = Files.createTempFile(DeviceContractTests.testDir(), "mapped", ".htod");
    }

    @AfterEach
    void deleteFile() throws IOException {
        Files.deleteIfExists(file);
    }

    @Test
    void readsMatchAModelWhileTheFileGrows() {
        assumeTrue(MappedReads.supported(), "no mapped reads on Java 24 and later");
        for (int round = 0; round < 4 * SCALE; round++) {
            long seed = 0x3A9_0000L + round;
            try {
                growAndRead(seed);
            } catch (Throwable e) {
                throw new AssertionError("seed=0x" + Long.toHexString(seed) + ": " + e, e);
            }
        }
    }

    private void growAndRead(long seed) throws IOException {
        Files.deleteIfExists(file);
        SplittableRandom r = new SplittableRandom(seed);
        byte[] model = new byte[12 << 20];
        long size = 0;
        try (FileDevice d = FileDevice.open(file)) {
            for (int op = 0; op < 3000; op++) {
                int kind = r.nextInt(10);
                if (kind < 3 || size == 0) {
                    // writes mostly near the end, so that the file grows in steps of every size
                    int len = 1 + r.nextInt(r.nextBoolean() ? 600 : 200_000);
                    long at = Math.min(model.length - len, Math.max(0, size - r.nextInt(4096) + (r.nextInt(4) == 0 ? 70_000 : 0)));
                    byte[] b = new byte[len];
                    r.nextBytes(b);
                    d.write(at, ByteBuffer.wrap(b));
                    System.arraycopy(b, 0, model, (int) at, len);
                    size = Math.max(size, at + len);
                } else if (kind < 9) {
                    int len = 1 + r.nextInt((int) Math.min(size, r.nextBoolean() ? 512 : 300_000));
                    long at = r.nextLong(size - len + 1);
                    ByteBuffer b = r.nextBoolean() ? ByteBuffer.allocate(len + 8) : ByteBuffer.allocateDirect(len + 8);
                    b.position(3).limit(3 + len);
                    d.read(at, b);
                    assertEquals(3 + len, b.position(), "the read advanced the buffer's position");
                    byte[] got = new byte[len];
                    b.get(3, got);
                    byte[] want = new byte[len];
                    System.arraycopy(model, (int) at, want, 0, len);
                    assertArrayEquals(want, got, "read of " + len + " bytes at " + at + ", file of " + size);
                } else {
                    long at = size - r.nextInt(100);
                    assertThrows(HtodIOException.class, () -> d.read(at, ByteBuffer.allocate(200)),
                            "a read past the end at " + at);
                }
            }
            assertEquals(size, d.size());
            assertTrue(d.mappedBytes() > size / 2, "mapped " + d.mappedBytes() + " of " + size + " bytes");
        }
    }

    @Test
    void aMappingServesOnlyWhatTheFileHoldsAndGrowsInSteps() throws IOException {
        assumeTrue(MappedReads.supported(), "no mapped reads on Java 24 and later");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[100]), 0);
            MappedReads m = new MappedReads((pos, size) -> ch.map(FileChannel.MapMode.READ_ONLY, pos, size), ch.size(), Long.MAX_VALUE);
            assertTrue(m.read(0, ByteBuffer.allocate(100)));
            assertFalse(m.read(50, ByteBuffer.allocate(51)), "a byte past the file");
            assertEquals(100, m.mappedBytes());
            // Grown by less than a step: the new bytes are read through the channel.
            ch.write(ByteBuffer.wrap(new byte[1000]), 100);
            m.grew(1100);
            assertFalse(m.read(100, ByteBuffer.allocate(1)));
            // Grown by a step: mapped again, longer.
            ch.write(ByteBuffer.wrap(new byte[1]), MappedReads.MIN_GROWTH + 200);
            m.grew(MappedReads.MIN_GROWTH + 201);
            assertTrue(m.read(100, ByteBuffer.allocate(1)));
            assertEquals(MappedReads.MIN_GROWTH + 201, m.mappedBytes());
            m.close();
            assertFalse(m.read(0, ByteBuffer.allocate(1)), "after close");
            assertEquals(0, m.mappedBytes());
        }
    }

    @Test
    void pastTheMemoryLimitEveryReadGoesThroughTheChannel() throws IOException {
        assumeTrue(MappedReads.supported(), "no mapped reads on Java 24 and later");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[3000]), 0);
            MappedReads m = new MappedReads((pos, size) -> ch.map(FileChannel.MapMode.READ_ONLY, pos, size), ch.size(), 4096);
            assertTrue(m.read(0, ByteBuffer.allocate(100)), "a file within the limit is mapped");
            ch.write(ByteBuffer.wrap(new byte[2000]), 3000);
            m.grew(5000);
            assertFalse(m.read(0, ByteBuffer.allocate(100)), "once the file outgrows the limit, not even what is mapped");
            m.close();
        }
        assertTrue(MappedReads.limitFor() > 0);
    }

    /**
     * The mappings are made through a read-only descriptor, so Linux knows they can never dirty a
     * page and leaves them out of the file's writeback (a shared mapping of a writable descriptor
     * has each page it maps write-protected again whenever that page is written back): in {@code
     * /proc/self/smaps}, no mapping of the file carries {@code sh} (shared) or {@code mw} (may
     * write) among its flags.
     */
    @Test
    void theMappingsCannotWriteSoWritebackPassesThemBy() throws IOException {
        Path smaps = Path.of("/proc/self/smaps");
        assumeTrue(Files.isReadable(smaps), "needs /proc/self/smaps");
        assumeTrue(MappedReads.supported(), "no mapped reads on Java 24 and later");
        try (FileDevice d = FileDevice.open(file)) {
            d.write(0, ByteBuffer.allocate(3 << 20));
            d.read(4096, ByteBuffer.allocate(4096));
            d.write(3 << 20, ByteBuffer.allocate(2 << 20)); // the file grows: a second, longer mapping
            d.read(4 << 20, ByteBuffer.allocate(4096));
            String name = file.toAbsolutePath().toRealPath().toString();
            List<String> flags = new ArrayList<>();
            boolean ours = false;
            boolean anyFlags = false;
            for (String line : Files.readAllLines(smaps)) {
                if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                    ours = line.endsWith(" " + name);
                } else if (line.startsWith("VmFlags:")) {
                    anyFlags = true;
                    if (ours) {
                        flags.add(line);
                    }
                }
            }
            assumeTrue(anyFlags, "a kernel whose smaps has no VmFlags");
            assertEquals(2, flags.size(), "the file's two mappings: " + flags);
            for (String f : flags) {
                List<String> each = List.of(f.substring("VmFlags:".length()).trim().split("\\s+"));
                assertTrue(each.contains("rd"), f);
                assertFalse(each.contains("sh"), "a mapping the kernel counts as shared and writable: " + f);
                assertFalse(each.contains("mw"), "a mapping that may write: " + f);
            }
        }
    }

    @Test
    void closeUnmapsTheFile() throws IOException {
        Path maps = Path.of("/proc/self/maps");
        assumeTrue(Files.isReadable(maps), "needs /proc/self/maps");
        assertTrue(Runtime.version().feature() >= 24 || MappedReads.supported(),
                "Java 17 to 23 unmap at once (sun.misc.Unsafe.invokeCleaner)");
        assumeTrue(MappedReads.supported(), "no mapped reads on Java 24 and later");
        FileDevice d = FileDevice.open(file);
        d.write(0, ByteBuffer.allocate(3 << 20));
        d.read(4096, ByteBuffer.allocate(4096));
        String name = file.toAbsolutePath().toRealPath().toString();
        assertTrue(Files.readString(maps).contains(name), "mapped while open");
        d.close();
        assertFalse(Files.readString(maps).contains(name), "still mapped after close");
        Files.delete(file);
    }

    @Test
    void closeWaitsForReadsInFlightAndLaterReadsSayClosed() throws Exception {
        assumeTrue(MappedReads.supported(), "no mapped reads on Java 24 and later");
        try (FileDevice w = FileDevice.open(file)) {
            byte[] b = new byte[4 << 20];
            new SplittableRandom(5).nextBytes(b);
            w.write(0, ByteBuffer.wrap(b));
        }
        for (int round = 0; round < 20 * SCALE; round++) {
            FileDevice d = FileDevice.open(file);
            AtomicBoolean go = new AtomicBoolean(true);
            AtomicLong reads = new AtomicLong();
            ConcurrentLinkedQueue<Throwable> wrong = new ConcurrentLinkedQueue<>();
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                long seed = round * 10L + t;
                Thread th = new Thread(() -> {
                    SplittableRandom r = new SplittableRandom(seed);
                    ByteBuffer buf = ByteBuffer.allocate(64 << 10);
                    try {
                        while (go.get() || r.nextInt(1000) != 0) {
                            int len = 1 + r.nextInt(buf.capacity());
                            d.read(r.nextInt((4 << 20) - len), buf.clear().limit(len));
                            reads.incrementAndGet();
                        }
                    } catch (StoreClosedException | HtodIOException expected) {
                        // closed under it: the channel's read, or the check before it
                    } catch (Throwable e) {
                        wrong.add(e);
                    }
                });
                th.start();
                ts.add(th);
            }
            while (reads.get() < 200) {
                Thread.onSpinWait();
            }
            d.close();
            go.set(false);
            for (Thread th : ts) {
                th.join();
            }
            assertTrue(wrong.isEmpty(), "round " + round + ": " + wrong);
            assertThrows(StoreClosedException.class, () -> d.read(0, ByteBuffer.allocate(1)));
            assertEquals(0, d.mappedBytes());
        }
    }

    @Test
    void withoutMappingEveryReadGoesThroughTheChannel() {
        try (FileDevice d = FileDevice.open(file, Long.MAX_VALUE, 512, false)) {
            d.write(0, ByteBuffer.allocate(8192));
            d.read(0, ByteBuffer.allocate(8192));
            assertEquals(0, d.mappedBytes());
        }
    }
}
