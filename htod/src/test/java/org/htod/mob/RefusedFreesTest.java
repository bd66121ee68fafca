package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.alloc.HeapFaults;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.HeldDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * An install whose record is durable, whose link is written, and whose free the heap then refuses
 * (a heap refuses every change after a device error in the middle of one). The record lists the
 * free already: the block must be freed later without being recorded again. It used to go back
 * among the blocks the next commit records, so that the log listed its free twice, and the
 * replay after a crash, which refuses to free a block twice, refused to open the store.
 */
class RefusedFreesTest {
    @Test
    void aFreeTheHeapRefusesAfterItsRecordIsDurableIsNeverRecordedAgain() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk);
        Thread installer = Thread.currentThread();
        long[] recordedAt = {Long.MAX_VALUE};
        WriteLayer[] layer = new WriteLayer[1];
        // Holds this thread's first write once its install record is durable: the link.
        HeldDevice held = new HeldDevice(crash, true,
                () -> Thread.currentThread() == installer && layer[0].log.durable() > recordedAt[0]);
        HtodStore s = Htod.builder(held).grain(64).logSize(1 << 20).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        for (int i = 0; i < 20; i++) {
            m.put("k" + i, "v" + i);
        }
        s.checkpoint(); // every key in the table
        layer[0] = LogStores.layer(s);
        ReentrantLock install = layer[0].installLock();
        // Another thread makes the heap refuse changes while the link write is held.
        Thread refusing = new Thread(() -> {
            try {
                if (held.held.await(1, TimeUnit.MINUTES)) {
                    HeapFaults.refuseChanges(layer[0].heap, "a device error met meanwhile (injected)");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                held.release.countDown();
            }
        }, "refusing");
        HtodException failed;
        install.lock(); // the flusher waits: the install below is this thread's
        try {
            m.remove("k0"); // one link to write (its predecessor's, or its bucket's), one block to free
            recordedAt[0] = layer[0].log.end();
            held.arm();
            refusing.start();
            failed = assertThrows(HtodException.class, layer[0].installs::installOnce);
        } finally {
            install.unlock();
        }
        refusing.join(TimeUnit.MINUTES.toMillis(1));
        assertTrue(held.held.getCount() == 0, "the install's link write was never reached");
        assertTrue(failed.getMessage().contains("injected"), "the install's free was refused: " + failed);
        // A later commit (here a checkpoint's, which then fails) must not record the free again.
        assertThrows(HtodException.class, s::checkpoint);
        crash.crashKeeping(at -> false);
        LogStores.closeQuietly(s);
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals(null, r.get("k0"));
            assertEquals(19, r.size());
            LogStores.verify(again); // the block is free: the replay freed it once
        }
    }
}
