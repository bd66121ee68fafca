package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.WriteBatch;
import org.htod.core.device.HeldDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The write buffer holds no more than its size, however many writers fill it at once: with the
 * flusher held at its first device write, so that nothing leaves the buffer, writers of values
 * a fifth of the buffer each put until each of them waits for room; the buffer must then count
 * no more than its size. Once the flusher goes on, every write must be there.
 */
class BufferBoundTest {
    private static final int BUFFER = 1 << 20;
    private static final int VALUE = 200_000;
    private static final int WRITERS = 4;
    private static final int KEYS_EACH = 8;

    @Test
    @Timeout(120)
    void concurrentPutsNeverHoldMoreThanTheBuffer() throws Exception {
        fillBehindAHeldFlusher((m, s, w, i) -> m.put(key(w, i), value(w, i)));
    }

    @Test
    @Timeout(120)
    void concurrentBatchesNeverHoldMoreThanTheBuffer() throws Exception {
        fillBehindAHeldFlusher((m, s, w, i) -> {
            try (WriteBatch b = s.batch()) {
                // the key twice: the second operation replaces the first in the buffer
                b.put(m, key(w, i), new byte[VALUE / 2]).put(m, key(w, i), value(w, i)).commit();
            }
        });
    }

    private interface Write {
        void run(HtodMap<String, byte[]> m, HtodStore s, int writer, int i);
    }

    private static String key(int writer, int i) {
        return "w" + writer + "-" + i;
    }

    private static byte[] value(int writer, int i) {
        byte[] v = new byte[VALUE];
        Arrays.fill(v, (byte) (writer * 31 + i));
        return v;
    }

    private static void fillBehindAHeldFlusher(Write write) throws Exception {
        HeldDevice dev = new HeldDevice(new MemoryDevice(), true,
                () -> Thread.currentThread().getName().startsWith("htod-flusher"));
        HtodStore s = Htod.builder(dev).grain(64).bufferSize(BUFFER).logSize(64 << 20)
                .durability(Durability.NONE).open();
        try {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            dev.armed = true;
            ConcurrentLinkedQueue<Throwable> failed = new ConcurrentLinkedQueue<>();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                writers.add(new Thread(() -> {
                    try {
                        for (int i = 0; i < KEYS_EACH; i++) {
                            write.run(m, s, writer, i);
                        }
                    } catch (Throwable e) {
                        failed.add(e);
                    }
                }, "writer-" + w));
            }
            writers.forEach(Thread::start);
            assertTrue(dev.held.await(60, TimeUnit.SECONDS), "the flusher began to install");
            // every writer waits for room: the buffer is as full as the writers can make it
            for (Thread t : writers) {
                while (!LogStores.inside(t, Mob.class, "awaitRoom")) {
                    assertTrue(t.isAlive(), t.getName() + " ended without waiting for room: " + failed);
                    Thread.sleep(1);
                }
            }
            // the layer's own figures: the store's would wait for the heap, which the held flusher holds
            WriteLayer.Figures full = LogStores.layer(s).figures();
            assertTrue(full.bufferBytes() <= full.bufferCapacity(),
                    "the buffer holds no more than its size with every writer waiting: " + full);
            dev.release.countDown();
            for (Thread t : writers) {
                t.join();
            }
            assertNull(failed.peek(), () -> "a writer failed: " + failed);
            assertEquals(WRITERS * KEYS_EACH, m.size());
            for (int w = 0; w < WRITERS; w++) {
                for (int i = 0; i < KEYS_EACH; i++) {
                    assertArrayEquals(value(w, i), m.get(key(w, i)), key(w, i));
                }
            }
        } finally {
            dev.release.countDown();
            s.close();
        }
    }
}
