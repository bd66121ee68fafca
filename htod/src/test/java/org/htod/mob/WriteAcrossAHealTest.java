package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.table.Change;
import org.junit.jupiter.api.Test;

/**
 * A key written again by a writer that held the append guard across a heal of the log (a compute
 * function, here), its earlier records dropped by the failure the heal ends. The heal's relog
 * passes the key by (its newest record is the new one, not dropped), so its new record is what
 * holds its state, and the log must be kept from there for it. It was kept from the key's first
 * dropped position, which the healed log fills with other records: a checkpoint then named a
 * position inside another record as where replay begins, and the open after a power cut was
 * refused as damage. At ASYNC, with no periodic sync in the test's time.
 */
class WriteAcrossAHealTest {
    private static Htod.Builder builder(BlockDevice dev) {
        return Htod.builder(dev).grain(64).logSize(1 << 20).durability(Durability.ASYNC)
                .syncInterval(Duration.ofHours(1));
    }

    private static String text(char c, int length) {
        return String.valueOf(c).repeat(length);
    }

    @Test
    void aKeyWrittenAgainAcrossAHealIsKeptFromItsNewRecord() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        HtodStore s = builder(faults).open();
        MemoryDevice crashed;
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put("a", text('a', 100));
            m.put("k", text('k', 10)); // both records past the durable end: the failure drops them
            WriteLayer layer = LogStores.layer(s);
            BufferedMap bm = layer.map("m", false);
            CountDownLatch deciding = new CountDownLatch(1);
            CountDownLatch decide = new CountDownLatch(1);
            AtomicReference<Throwable> writerFailed = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    bm.update(Codec.string().encode("k"), current -> {
                        deciding.countDown();
                        try {
                            decide.await(); // holding the append guard, across the failure and the heal
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        return Change.put(Codec.string().encode(text('n', 500)), 0);
                    });
                } catch (Throwable t) {
                    writerFailed.set(t);
                }
            }, "writer across the heal");
            writer.start();
            assertTrue(deciding.await(10, TimeUnit.SECONDS));
            faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
            assertThrows(HtodException.class, () -> layer.log.sync(), "the records of a and k dropped");
            Mob.Pending k = layer.mob.get(bm.tableId, Codec.string().encode("k"));
            org.junit.jupiter.api.Assumptions.assumeTrue(k != null && layer.log.dropped(k.lastLsn, k.lastGeneration),
                    "the flusher installed and synced the first records before the failure (a slow machine)");
            Thread healer = new Thread(() -> m.put("h", "h"), "healer"); // heals; its relog waits for the guard
            healer.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!LogStores.inside(healer, WriteLayer.class, "relogDropped") && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            assertTrue(LogStores.inside(healer, WriteLayer.class, "relogDropped"), "the heal's relog waits for the guard");
            assertFalse(layer.log.failed(), "healed: the writer's record goes where the dropped ones were");
            decide.countDown();
            writer.join(10_000);
            healer.join(10_000);
            assertFalse(writer.isAlive() || healer.isAlive());
            assertEquals(null, writerFailed.get());
            s.sync();
            layer.installs.checkpoint(false); // before any install: replay begins where the oldest key's log is kept
            crashed = LogStores.copy(disk); // a power cut now
        } finally {
            LogStores.closeQuietly(s);
        }
        try (HtodStore again = builder(crashed).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals(text('a', 100), r.get("a"), "logged again by the relog");
            assertEquals(text('n', 500), r.get("k"), "the writer's change, made across the heal");
            assertEquals("h", r.get("h"));
            LogStores.verify(again);
        }
    }
}
