package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * The flusher meets damage in a table and stops for good, at ASYNC: the records appended since
 * the log's last sync are made durable before the log refuses every call, since its device still
 * works and the close says the next open recovers them. They used to stay unwritten for good.
 */
class StoppedFlusherTest {
    private static final String KEY = "victim-key-7f3a9c";

    /** Overwrites every copy of {@code text} on the device (the entry's key in the heap, the log's record too). */
    private static int damage(MemoryDevice disk, String text) {
        byte[] pattern = text.getBytes(StandardCharsets.UTF_8);
        ByteBuffer all = ByteBuffer.allocate((int) disk.size());
        disk.read(0, all);
        byte[] b = all.array();
        int found = 0;
        for (int i = 0; i + pattern.length <= b.length; i++) {
            if (java.util.Arrays.equals(b, i, i + pattern.length, pattern, 0, pattern.length)) {
                disk.write(i, ByteBuffer.wrap("X".repeat(pattern.length).getBytes(StandardCharsets.UTF_8)));
                found++;
            }
        }
        return found;
    }

    @Test
    void aFlusherStoppedByDamageMakesTheLogDurableFirst() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = Htod.builder(disk).grain(64).logSize(1 << 20).cacheSize(0).durability(Durability.ASYNC)
                .syncInterval(Duration.ofHours(1)).open();
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put(KEY, "v1");
            s.checkpoint(); // installed and durable
            m.put(KEY, "v2"); // logged at ASYNC, not synced; its install will walk the chain
            m.put("other", "o");
            assertTrue(damage(disk, KEY) > 0, "the installed entry's key found on the device");
            WriteLayer layer = LogStores.layer(s);
            long end = layer.log.end();
            assertTrue(layer.log.durable() < end, "not durable yet");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!(layer.flusherFailure() instanceof CorruptStoreException) && System.nanoTime() < deadline) {
                Thread.sleep(10); // the flusher installs after a second idle
            }
            assertTrue(layer.flusherFailure() instanceof CorruptStoreException, "the flusher met the damage: "
                    + layer.flusherFailure());
            assertThrows(HtodException.class, () -> m.put("after", "a"), "the store takes no more changes");
            assertTrue(layer.log.durable() >= end, "the records appended before the stop are durable: "
                    + layer.log.durable() + " of " + end);
            assertNotEquals(0, end);
        } finally {
            LogStores.closeQuietly(s);
        }
    }
}
