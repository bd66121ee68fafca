package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.WriteBatch;
import org.htod.core.device.HeldDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.log.Log;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A group of 1.5 MB builds up while another leader's write is held, and is committed as one; then
 * small commits allocate little again: the log's buffer for the next group is no larger than the
 * spare it keeps. Each took a buffer as large as the last group's, and since the one it replaced
 * was too large to keep, every later commit, of 100 bytes, allocated the large group's size.
 */
class CommitBufferTest {
    @Test
    void smallCommitsAfterALargeGroupAllocateLittle() throws Exception {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported(), "no per-thread allocation counts here");
        Thread[] leader = new Thread[1];
        HeldDevice dev = new HeldDevice(new MemoryDevice(), true, () -> Thread.currentThread() == leader[0]);
        try (HtodStore s = Htod.builder(dev).grain(64).logSize(16L << 20).durability(Durability.SYNC).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            AtomicReference<Throwable> failed = new AtomicReference<>();
            leader[0] = new Thread(() -> {
                try {
                    m.put("first", "v"); // leads a group, its write held
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            dev.arm();
            leader[0].start();
            assertTrue(dev.held.await(10, TimeUnit.SECONDS), "the leader's write is held");
            Thread follower = new Thread(() -> {
                try {
                    WriteBatch big = s.batch();
                    for (int i = 0; i < 15; i++) {
                        big.put(m, "big" + i, "x".repeat(100_000));
                    }
                    big.commit(); // about 1.5 MB waiting for the next group
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            follower.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!LogStores.inside(follower, Log.class, "awaitDurable") && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            assertTrue(LogStores.inside(follower, Log.class, "awaitDurable"), "the batch waits for its group");
            dev.release.countDown();
            leader[0].join(10_000);
            follower.join(10_000);
            assertEquals(null, failed.get());
            for (int i = 0; i < 50; i++) {
                m.put("warm" + i, "v"); // compiled, caches warm, spares settled
            }
            long id = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 100; i++) {
                m.put("small" + i, "v".repeat(100));
            }
            long perPut = (threads.getThreadAllocatedBytes(id) - before) / 100;
            assertTrue(perPut < 64 << 10, "bytes allocated a put of 100 bytes after a large group: " + perPut);
        }
    }
}
