package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;
import org.junit.jupiter.api.Test;

class FaultyDeviceTest {

    @Test
    void theNthWriteFailsWithTheChosenErrorAndWritesNothing() {
        MemoryDevice m = new MemoryDevice();
        FaultyDevice d = new FaultyDevice(m);
        d.failWrite(2, FaultyDevice.Fault.DISK_FULL, false);
        d.write(0, ByteBuffer.wrap(new byte[] {1}));
        assertThrows(StoreFullException.class, () -> d.write(100, ByteBuffer.wrap(new byte[] {2})));
        assertEquals(1, m.size(), "the failed write wrote nothing");
        d.write(100, ByteBuffer.wrap(new byte[] {3}));
        assertEquals(101, m.size(), "a fault that is not sticky happens once");
    }

    @Test
    void aWriteArmedToLandPartlyWritesItsFirstBytesThenFails() {
        MemoryDevice m = new MemoryDevice();
        FaultyDevice d = new FaultyDevice(m);
        d.failWriteAfter(1, 3);
        ByteBuffer src = ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5});
        assertThrows(HtodIOException.class, () -> d.write(10, src));
        assertEquals(13, m.size(), "the first three bytes landed");
        ByteBuffer back = ByteBuffer.allocate(3);
        m.read(10, back);
        assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3}), back.flip());
        assertEquals(0, src.position(), "the caller's buffer is not consumed");
        d.write(20, ByteBuffer.wrap(new byte[] {6}));
        assertEquals(21, m.size(), "the fault happens once");
        d.failWrite(1, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(HtodIOException.class, () -> d.write(30, ByteBuffer.wrap(new byte[] {7})));
        assertEquals(21, m.size(), "a plain fault writes nothing again");
    }

    @Test
    void aStickyFaultFailsEveryLaterCallOfItsKindUntilHealed() {
        FaultyDevice d = new FaultyDevice(new MemoryDevice());
        d.failSync(1, FaultyDevice.Fault.IO_ERROR, true);
        HtodIOException e = assertThrows(HtodIOException.class, d::sync);
        assertEquals(true, e.getMessage().contains("sync"), e.getMessage());
        assertThrows(HtodIOException.class, d::sync);
        d.write(0, ByteBuffer.allocate(1)); // writes are armed apart, and were not
        d.heal();
        d.write(0, ByteBuffer.allocate(1));
        d.sync();
    }

    @Test
    void writeAndSyncFaultsAreArmedApart() {
        FaultyDevice d = new FaultyDevice(new MemoryDevice());
        d.failWrite(2, FaultyDevice.Fault.IO_ERROR, true);
        d.failSync(1, FaultyDevice.Fault.DISK_FULL, false);
        d.write(0, ByteBuffer.allocate(1));
        assertThrows(HtodIOException.class, () -> d.write(1, ByteBuffer.allocate(1)));
        assertThrows(HtodIOException.class, () -> d.write(2, ByteBuffer.allocate(1)), "the write fault is sticky");
        assertThrows(StoreFullException.class, d::sync);
    }
}
