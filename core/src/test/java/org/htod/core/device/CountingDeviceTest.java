package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class CountingDeviceTest {

    @Test
    void countsEveryRequestItsBytesAndTheDistanceBetweenThem() {
        CountingDevice d = new CountingDevice(new MemoryDevice());
        d.write(0, ByteBuffer.allocate(100));      // ends at 100
        d.write(1000, ByteBuffer.allocate(50));    // seek 900, ends at 1050
        d.read(50, ByteBuffer.allocate(10));       // seek 1000, ends at 60
        d.sync();
        assertEquals(new IoCounts(1, 2, 10, 150, 1, 1900), d.counts());
        IoCounts mark = d.counts();
        d.read(60, ByteBuffer.allocate(40));       // seek 0
        assertEquals(new IoCounts(1, 0, 40, 0, 0, 0), d.counts().minus(mark));
        d.reset();
        assertEquals(new IoCounts(0, 0, 0, 0, 0, 0), d.counts());
        d.write(500, ByteBuffer.allocate(1));      // first request after reset: no seek counted
        assertEquals(0, d.counts().seekDistance());
    }
}
