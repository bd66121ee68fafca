package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/** The crash tests are only as good as the device that crashes; this checks it. */
class TestCrashDeviceTest {
    private static ByteBuffer filled(int length, int value) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) value);
        return ByteBuffer.wrap(b);
    }

    @Test
    void pendingWritesAreVisibleAndSyncedOnesSurvive() {
        TestCrashDevice dev = new TestCrashDevice(new MemoryDevice(), 512);
        dev.write(0, filled(1024, 1));
        dev.sync();
        dev.write(512, filled(1024, 2));
        assertEquals(1536, dev.size());
        assertArrayEquals(Slots.bytes(dev, 512, 4), new byte[] {2, 2, 2, 2});
        assertArrayEquals(Slots.bytes(dev, 0, 4), new byte[] {1, 1, 1, 1});
        assertEquals(1, dev.pendingCount());
        MemoryDevice disk = dev.crash(1);
        byte[] first = Slots.bytes(disk, 0, 512);
        for (byte b : first) {
            assertEquals(1, b, "the synced sector before the pending write survives whatever happens");
        }
        assertThrows(HtodIOException.class, dev::size, "the crashed device is dead");
    }

    @Test
    void crashKeepsEachSectorOfATornWriteWholeOrNotAtAll() {
        for (long seed = 0; seed < 200; seed++) {
            TestCrashDevice dev = new TestCrashDevice(new MemoryDevice(), 512);
            dev.write(0, filled(8 * 512, 7));
            MemoryDevice disk = dev.crash(seed, true);
            for (int sector = 0; sector * 512L < disk.size(); sector++) {
                byte[] s = Slots.bytes(disk, sector * 512L, 512);
                byte v = s[0];
                for (byte b : s) {
                    assertEquals(v, b, "seed=" + seed + " sector " + sector);
                }
            }
        }
    }

    @Test
    void crashOutcomesVaryWithTheSeed() {
        boolean sawKept = false;
        boolean sawDropped = false;
        for (long seed = 0; seed < 100; seed++) {
            TestCrashDevice dev = new TestCrashDevice(new MemoryDevice(), 512);
            dev.write(0, filled(512, 3));
            MemoryDevice disk = dev.crash(seed);
            if (disk.size() == 0) {
                sawDropped = true;
            } else {
                sawKept = true;
            }
        }
        assertTrue(sawKept && sawDropped);
    }

    @Test
    void failAtWriteThrowsThenEverythingFails() {
        TestCrashDevice dev = new TestCrashDevice(new MemoryDevice(), 512);
        dev.failAtWrite(2);
        dev.write(0, filled(10, 1));
        assertThrows(HtodIOException.class, () -> dev.write(10, filled(10, 2)));
        assertEquals(2, dev.writeCount());
        assertEquals(2, dev.pendingCount(), "the failing write is in flight, not lost for sure");
        assertThrows(HtodIOException.class, dev::sync);
        assertThrows(HtodIOException.class, () -> dev.write(20, filled(1, 1)));
    }

    @Test
    void writesBeyondCapacityAreRefused() {
        TestCrashDevice dev = new TestCrashDevice(1024, 512);
        assertThrows(StoreFullException.class, () -> dev.write(1000, filled(100, 1)));
        assertEquals(0, dev.writeCount());
    }
}
