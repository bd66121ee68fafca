package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.device.HeldDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A close whose flusher is inside a device operation that does not return gives up after its
 * wait, instead of holding the closing thread for ever, and says where the flusher is; the store
 * stays closing, and a close called again once the device answers closes it with every change.
 */
class HungFlusherCloseTest {

    @Test
    @Timeout(60)
    void aCloseGivesUpOnAFlusherStuckInTheDeviceAndALaterCloseFinishes() throws Exception {
        MemoryDevice mem = new MemoryDevice();
        HeldDevice dev = new HeldDevice(mem, true, () -> Thread.currentThread().getName().startsWith("htod-flusher"));
        HtodStore s = Htod.builder(dev).grain(64).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        LogStores.layer(s).closeWaitNanos = TimeUnit.MILLISECONDS.toNanos(300);
        dev.armed = true;
        for (int i = 0; i < 100; i++) {
            m.put("k" + i, "v" + i);
        }
        HtodException e;
        try {
            assertTrue(dev.held.await(30, TimeUnit.SECONDS), "the flusher began to install");
            e = assertThrows(HtodException.class, s::close, "a close whose flusher never returns from the device");
        } finally {
            dev.release.countDown();
        }
        assertTrue(e.getMessage().contains("could not close") && e.getMessage().contains("HeldDevice"),
                "says that the close gave up, and where the flusher is: " + e.getMessage());
        assertFalse(LogStores.layer(s).isClosed(), "the store is not closed");
        assertThrows(StoreClosedException.class, () -> m.put("late", "x"), "a closing store takes no more writes");
        s.close(); // the device answers again: this close waits for the flusher and finishes
        assertTrue(LogStores.layer(s).isClosed());
        try (HtodStore again = Htod.builder(mem.reopen()).open()) {
            HtodMap<String, String> m2 = again.map("m", Codec.string(), Codec.string());
            assertEquals(100, m2.size());
            assertEquals("v99", m2.get("k99"));
            assertTrue(again.recoveryReport().clean(), "the second close was a clean one: " + again.recoveryReport());
        }
    }
}
