package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.table.Change;
import org.junit.jupiter.api.Test;

/**
 * The write layer's close against a writer in the middle of a change: the flusher found the
 * buffer empty and began the clean checkpoint while the writer, past its last look at whether
 * the layer closes, had yet to log and buffer its change. The checkpoint waits for the writer
 * (the append guard), and then says clean only if the buffer is still empty; it used to say clean
 * regardless, and the next open, replaying nothing after a clean close, lost the change the writer
 * had been told was made. The store's own close waits for its writers first (its gate), so the
 * write layer is closed directly here, as a layer below the store may be.
 */
class CleanCloseTest {
    private static Htod.Builder builder(BlockDevice dev) {
        return Htod.builder(dev).grain(64).logSize(1 << 20).durability(Durability.SYNC);
    }

    /** Whether the flusher thread is inside the checkpoint's code, waiting or not. */
    private static boolean flusherInCheckpoint() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("htod-flusher") && LogStores.inside(t, Installs.class, "checkpoint")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aChangeMadeWhileTheCloseWaitsForItsWriterSurvivesTheClose() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = builder(disk).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        m.put("before", "b");
        s.checkpoint(); // the buffer empty: a close's flusher goes straight to its clean checkpoint
        WriteLayer layer = LogStores.layer(s);
        BufferedMap bm = layer.map("m", false);
        CountDownLatch deciding = new CountDownLatch(1);
        CountDownLatch decide = new CountDownLatch(1);
        AtomicReference<Throwable> writerFailed = new AtomicReference<>();
        byte[] key = Codec.string().encode("during");
        byte[] value = Codec.string().encode("d");
        Thread writer = new Thread(() -> {
            try {
                bm.update(key, current -> {
                    deciding.countDown();
                    try {
                        decide.await(); // in the middle of the change: its locks held
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return Change.put(value, 0);
                });
            } catch (Throwable t) {
                writerFailed.set(t);
            }
        });
        writer.start();
        assertTrue(deciding.await(10, TimeUnit.SECONDS));
        AtomicReference<Throwable> closeFailed = new AtomicReference<>();
        Thread closer = new Thread(() -> {
            try {
                layer.close();
            } catch (Throwable t) {
                closeFailed.set(t);
            }
        });
        closer.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!flusherInCheckpoint() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(flusherInCheckpoint(), "the flusher began the close's checkpoint while the writer decides");
        decide.countDown();
        writer.join(10_000);
        closer.join(10_000);
        assertFalse(writer.isAlive() || closer.isAlive(), "the writer and the close ended");
        assertEquals(null, writerFailed.get(), "the writer's change was made");
        assertEquals(null, closeFailed.get());
        LogStores.closeQuietly(s);
        try (HtodStore again = builder(disk.reopen()).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals("b", r.get("before"));
            assertEquals("d", r.get("during"), "the change made while the close waited: "
                    + again.recoveryReport());
            LogStores.verify(again);
        }
    }
}
