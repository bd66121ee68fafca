package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
        AtomicReference<Thread> installer = new AtomicReference<>();
        long[] recordedAt = {Long.MAX_VALUE};
        WriteLayer[] layer = new WriteLayer[1];
        // Holds the installing thread's first write once its install record is durable: the link.
        HeldDevice held = new HeldDevice(crash, true,
                () -> Thread.currentThread() == installer.get() && layer[0].log.durable() > recordedAt[0]);
        HtodStore s = Htod.builder(held).grain(64).logSize(1 << 20).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        for (int i = 0; i < 20; i++) {
            m.put("k" + i, "v" + i);
        }
        s.checkpoint(); // every key in the table
        layer[0] = LogStores.layer(s);
        ReentrantLock install = layer[0].installLock();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t;
        install.lock(); // the flusher waits; the install below is the test's
        try {
            m.remove("k0"); // one link to write (its predecessor's, or its bucket's), one block to free
            recordedAt[0] = layer[0].log.end();
            held.arm();
            t = new Thread(() -> {
                install.lock();
                try {
                    layer[0].installs.installOnce();
                } catch (Throwable e) {
                    failed.set(e);
                } finally {
                    install.unlock();
                }
            }, "installing");
            installer.set(t);
            t.start();
        } finally {
            install.unlock(); // the fair lock goes to the installing thread, queued first
        }
        assertTrue(held.held.await(1, TimeUnit.MINUTES), "the install's link write was never reached");
        HeapFaults.refuseChanges(layer[0].heap, "a device error met meanwhile (injected)");
        held.release.countDown();
        t.join(TimeUnit.MINUTES.toMillis(1));
        assertTrue(failed.get() instanceof HtodException && failed.get().getMessage().contains("injected"),
                "the install's free was refused: " + failed.get());
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
