package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodMetrics;
import org.htod.HtodStore;
import org.htod.StoreStats;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.HeldDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The store's figures count the writes that waited for the flusher: for room in the write buffer,
 * and for room in the log. The test holds the flusher's first device write, once armed, so that
 * the buffer (or the log) fills behind a writer; the writer must be seen waiting in that very
 * wait before the flusher is let go, and then the figures (and the meters that read them) must
 * count its wait, and only that kind.
 */
class BackPressureFiguresTest {

    @Test
    @Timeout(120)
    void aWriteThatWaitsForRoomInTheBufferIsCounted() throws Exception {
        StoreStats.WriteLayerFigures f = waitBehindTheFlusher(b -> b.bufferSize(64 << 10).logSize(16 << 20),
                "org.htod.mob.Mob", "awaitRoom");
        assertTrue(f.bufferWaits() >= 1, "a write waited for room in the buffer: " + f);
        assertTrue(f.bufferWaitSeconds() > 0, "for some time: " + f);
        assertEquals(0, f.logWaits(), "the log had room: " + f);
        assertEquals(0.0, f.logWaitSeconds(), "the log had room: " + f);
    }

    @Test
    @Timeout(120)
    void aWriteThatWaitsForRoomInTheLogIsCounted() throws Exception {
        StoreStats.WriteLayerFigures f = waitBehindTheFlusher(b -> b.bufferSize(64 << 20).logSize(1 << 20),
                "org.htod.core.log.Log", "awaitRoom");
        assertTrue(f.logWaits() >= 1, "a write waited for room in the log: " + f);
        assertTrue(f.logWaitSeconds() > 0, "for some time: " + f);
        assertEquals(0, f.bufferWaits(), "the buffer had room: " + f);
    }

    /**
     * Opens a store shaped by {@code shape}, holds its flusher's next write, has a writer put
     * more than the buffer and the log hold together, waits until that writer is seen inside
     * {@code waitClass.waitMethod}, lets the flusher go, and returns the figures once the writer
     * is done.
     */
    private static StoreStats.WriteLayerFigures waitBehindTheFlusher(
            java.util.function.UnaryOperator<Htod.Builder> shape, String waitClass, String waitMethod) throws Exception {
        HeldDevice dev = new HeldDevice(new MemoryDevice(), true,
                () -> Thread.currentThread().getName().startsWith("htod-flusher"));
        HtodStore s = shape.apply(Htod.builder(dev).grain(64)).durability(Durability.NONE).open();
        try {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            StoreStats.WriteLayerFigures before = s.stats().writeLayer();
            assertEquals(0, before.bufferWaits() + before.logWaits(), "no wait before any write: " + before);
            dev.armed = true;
            byte[] value = new byte[1000];
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < 2_000; i++) { // 2 MB: more than the smaller of the two holds
                        Arrays.fill(value, (byte) i);
                        m.put("k" + i, value);
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            }, "writer");
            writer.start();
            assertTrue(dev.held.await(60, TimeUnit.SECONDS), "the flusher began to install");
            while (!inside(writer, waitClass, waitMethod)) {
                assertTrue(writer.isAlive(), "the writer ended without waiting in " + waitMethod + ": " + failed.get());
                Thread.sleep(1);
            }
            dev.release.countDown();
            writer.join();
            if (failed.get() != null) {
                throw new AssertionError("the writer failed", failed.get());
            }
            assertEquals(2_000, m.size());
            StoreStats.WriteLayerFigures f = s.stats().writeLayer();
            // the meters read the same counts
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new HtodMetrics(s).bindTo(registry);
            assertEquals(f.bufferWaits(), registry.find("htod.buffer.waits").functionTimer().count());
            assertEquals(f.logWaits(), registry.find("htod.log.waits").functionTimer().count());
            assertEquals(f.bufferWaitSeconds(),
                    registry.find("htod.buffer.waits").functionTimer().totalTime(TimeUnit.SECONDS), 1e-9);
            return f;
        } finally {
            dev.release.countDown();
            s.close();
        }
    }

    /** Whether {@code t} waits, now, inside {@code cls.method}. */
    private static boolean inside(Thread t, String cls, String method) {
        Thread.State st = t.getState();
        if (st != Thread.State.WAITING && st != Thread.State.TIMED_WAITING) {
            return false;
        }
        return Arrays.stream(t.getStackTrace())
                .anyMatch(e -> e.getClassName().equals(cls) && e.getMethodName().equals(method));
    }
}
