package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.MemoryDevice;
import org.htod.core.log.Log;
import org.htod.table.HashtableOnDisk;
import org.junit.jupiter.api.Test;

/**
 * A doubling step is taken only while the log has room for the flusher's records, and that room
 * is looked at under the install lock the step is taken under. A caller's checkpoint steps and
 * installs beside the flusher, so the room seen before the lock may be gone once it is held; a
 * step taken then eats the reserve the flusher needs for the install and the checkpoint that make
 * room, and a later install waits for room holding the lock the checkpoint needs.
 *
 * <p>The test stops the flusher and runs the steps itself: a thread asks for a doubling step
 * while the log has room and queues for the install lock, which the test holds while it fills the
 * log past that room. Once the lock is free, the step must not be taken (it was, when the room
 * was looked at before the lock).
 */
class DoublingRoomUnderLockTest {

    @Test
    void aStepQueuedForTheInstallLockLooksForLogRoomOnceItHoldsIt() throws Exception {
        HtodStore s = Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20).durability(Durability.NONE)
                .loadFactor(0.25).open();
        try {
            WriteLayer layer = LogStores.layer(s);
            layer.stopFlusherThread();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 2_000; i++) {
                m.put("k" + i, "v" + i);
            }
            HashtableOnDisk table = layer.map("m", false).table;
            Log log = layer.log;
            ReentrantLock install = layer.installLock();
            AtomicReference<Object> stepped = new AtomicReference<>();
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread stepper;
            Thread holder;
            long stepsBefore;
            long deadline = System.nanoTime() + 10_000_000_000L;
            install.lock();
            try {
                while (layer.installs.installOnce()) {
                    // installed: the table holds its entries and is due a doubling
                }
                assertTrue(table.doublingDue(0), "the table is due a doubling");
                assertTrue(roomForFlusherRecords(log), "the log has room before the stepper queues");
                stepsBefore = layer.stats().doublingSteps;
                stepper = new Thread(() -> {
                    try {
                        stepped.set(layer.installs.doublings());
                    } catch (Throwable t) {
                        stepped.set(t);
                    }
                }, "stepper");
                stepper.start();
                awaitQueued(install, stepper, deadline);
                // The stepper takes the lock for the catalog first (the first table, never due
                // here). A second thread queued behind it has the lock next, the lock being fair,
                // and holds it while the stepper queues again, for "m".
                holder = new Thread(() -> {
                    install.lock();
                    try {
                        held.countDown();
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        install.unlock();
                    }
                }, "holder");
                holder.start();
                awaitQueued(install, holder, deadline);
            } finally {
                install.unlock();
            }
            try {
                assertTrue(held.await(10, TimeUnit.SECONDS), "the holder has the lock");
                awaitQueued(install, stepper, deadline);
                // Another thread's records (a checkpoint's, an install's) take the room meanwhile;
                // no less than one flusher record's budget is left, so a step would still fit.
                while (roomForFlusherRecords(log)) {
                    log.appendReserved(DataRecord.TYPE, ByteBuffer.wrap(new byte[4_096]));
                }
                assertTrue(log.regionSize() - log.used() > log.flusherRecordBudget(), "a step's record would fit");
            } finally {
                release.countDown();
            }
            holder.join(10_000);
            stepper.join(10_000);
            assertFalse(stepper.isAlive(), "the stepper ends");
            assertEquals(Boolean.TRUE, stepped.get(), "the step is left for later, and counted as remaining");
            assertEquals(stepsBefore, layer.stats().doublingSteps, "no step is taken without the log's room for "
                    + "the flusher's records");
            assertTrue(table.doublingDue(0), "the doubling is still due");
        } finally {
            LogStores.closeQuietly(s);
        }
    }

    private static void awaitQueued(ReentrantLock lock, Thread t, long deadline) throws InterruptedException {
        while (!lock.hasQueuedThread(t) && t.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(lock.hasQueuedThread(t), t.getName() + " waits for the install lock");
    }

    /** As {@code Installs.roomForFlusherRecords}: room for four more of the flusher's records. */
    private static boolean roomForFlusherRecords(Log log) {
        return log.used() + 4 * log.flusherRecordBudget() <= log.regionSize();
    }
}
