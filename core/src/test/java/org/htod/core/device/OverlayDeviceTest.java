package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.htod.core.HtodIOException;
import org.htod.core.StoreLockedException;
import org.junit.jupiter.api.Test;

/**
 * An overlay over a device that already holds bytes: random writes and reads, some across the
 * end of the device below, against a byte-array model; the device below keeps its bytes. And a
 * file opened read-only: a shared lock that an exclusive open refuses.
 */
class OverlayDeviceTest {
    @Test
    void readsSeeTheWritesOverTheBytesBelowWhichKeepTheirs() {
        long seed = System.nanoTime();
        SplittableRandom r = new SplittableRandom(seed);
        int belowSize = 100_000;
        byte[] original = new byte[belowSize];
        r.nextBytes(original);
        MemoryDevice below = new MemoryDevice();
        below.write(0, ByteBuffer.wrap(original));
        byte[] model = new byte[300_000];
        System.arraycopy(original, 0, model, 0, belowSize);
        int high = belowSize;
        try (OverlayDevice d = new OverlayDevice(below.reopen())) {
            for (int op = 0; op < 500; op++) {
                int len = 1 + r.nextInt(r.nextBoolean() ? 100 : 20_000);
                int pos = r.nextInt(Math.min(model.length - len, high + 10_000));
                if (r.nextInt(3) > 0) {
                    byte[] data = new byte[len];
                    r.nextBytes(data);
                    d.write(pos, r.nextBoolean() ? ByteBuffer.wrap(data) : ByteBuffer.allocateDirect(len).put(data).flip());
                    System.arraycopy(data, 0, model, pos, len);
                    high = Math.max(high, pos + len);
                } else if (pos + len <= high) {
                    ByteBuffer b = ByteBuffer.allocate(len);
                    d.read(pos, b);
                    byte[] want = new byte[len];
                    System.arraycopy(model, pos, want, 0, len);
                    assertArrayEquals(want, b.array(), "seed " + seed + ": read of " + len + " at " + pos);
                }
                assertEquals(high, d.size(), "seed " + seed);
            }
            assertThrows(HtodIOException.class, () -> d.read(d.size() - 1, ByteBuffer.allocate(2)));
        }
        byte[] after = new byte[belowSize];
        below.read(0, ByteBuffer.wrap(after));
        assertArrayEquals(original, after, "seed " + seed + ": the device below is untouched");
        assertEquals(belowSize, below.size());
    }

    @Test
    void writesPastWhatItMayHoldAreRefusedWholeAndTheRestStays() {
        MemoryDevice below = new MemoryDevice();
        below.write(0, ByteBuffer.wrap(new byte[10_000]));
        try (OverlayDevice d = new OverlayDevice(below, 2048)) { // four 512-byte pages
            d.write(100, ByteBuffer.wrap(new byte[] {7}));
            d.write(3072, ByteBuffer.wrap(new byte[1536])); // pages 6 to 8: four in all
            assertEquals(2048, d.heldBytes());
            assertThrows(org.htod.core.StoreFullException.class, () -> d.write(9000, ByteBuffer.wrap(new byte[] {1})));
            d.write(101, ByteBuffer.wrap(new byte[] {8})); // a page it holds takes more
            ByteBuffer b = ByteBuffer.allocate(2);
            d.read(100, b);
            assertArrayEquals(new byte[] {7, 8}, b.array());
            assertEquals(2048, d.heldBytes());
        }
    }

    @Test
    void aFileOpenedReadOnlySharesItsLockWithNoWriter() throws Exception {
        Path f = Files.createTempFile(DeviceContractTests.testDir(), "read-only", ".htod");
        try {
            try (FileDevice w = FileDevice.open(f)) {
                w.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
                w.sync();
                assertThrows(StoreLockedException.class, () -> FileDevice.openReadOnly(f), "a writer holds it");
            }
            try (FileDevice r = FileDevice.openReadOnly(f)) {
                assertTrue(ProcLocks.lockedByThisProcess(f), "locked while read");
                ByteBuffer b = ByteBuffer.allocate(3);
                r.read(0, b);
                assertArrayEquals(new byte[] {1, 2, 3}, b.array());
                assertThrows(HtodIOException.class, () -> r.write(0, ByteBuffer.wrap(new byte[] {9})));
                r.sync(); // nothing to make durable
                assertThrows(StoreLockedException.class, () -> FileDevice.open(f), "a reader holds it");
            }
            try (FileDevice w = FileDevice.open(f)) {
                assertEquals(3, w.size(), "released at close");
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }

    @Test
    void twoReadOnlyOpensInOneProcessShareTheFileAndItsLockUntilTheLastCloses() throws Exception {
        Path f = Files.createTempFile(DeviceContractTests.testDir(), "read-only-two", ".htod");
        try {
            try (FileDevice w = FileDevice.open(f)) {
                w.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
                w.sync();
            }
            FileDevice a = FileDevice.openReadOnly(f);
            FileDevice b;
            try {
                b = FileDevice.openReadOnly(f);
            } finally {
                a.close();
            }
            try (b) {
                assertTrue(ProcLocks.lockedByThisProcess(f), "still locked with one reader open");
                assertThrows(StoreLockedException.class, () -> FileDevice.open(f), "a reader still holds it");
                ByteBuffer buf = ByteBuffer.allocate(3);
                b.read(0, buf);
                assertArrayEquals(new byte[] {1, 2, 3}, buf.array());
                assertThrows(org.htod.core.StoreClosedException.class, () -> a.read(0, ByteBuffer.allocate(1)));
            }
            assertFalse(ProcLocks.lockedByThisProcess(f), "released with the last reader");
            try (FileDevice w = FileDevice.open(f)) {
                assertEquals(3, w.size());
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }

    private static void assertTrue(boolean b, String what) {
        org.junit.jupiter.api.Assertions.assertTrue(b, what);
    }
}
