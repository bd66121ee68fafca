package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class MemoryDeviceTest {

    @Test
    void aDeviceReopenedFromAnOldHandleSeesWhatLaterHandlesWrote() {
        MemoryDevice first = new MemoryDevice();
        first.write(0, ByteBuffer.wrap(new byte[100]));
        first.close();
        MemoryDevice second = first.reopen();
        second.write(100, ByteBuffer.wrap(new byte[] {7}));
        second.close();
        MemoryDevice third = first.reopen(); // as reopening a file by its name gives its current size
        assertEquals(101, third.size());
        ByteBuffer b = ByteBuffer.allocate(1);
        third.read(100, b);
        assertEquals(7, b.get(0));
    }
}
