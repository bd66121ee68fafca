package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.htod.core.HtodException;
import org.htod.core.alloc.Heap;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * A link whose flush fails stays visible to readers the whole time: in the flush's map while it
 * is written, then back among the waiting links. Readers look in the waiting links first and the
 * flush's second; a failed flush used to put its links back among the waiting ones and then
 * empty the flush's map, so a reader that had read the waiting links before the one and the
 * flush's map after the other found the link in neither, and took the disk's value: an entry's
 * {@code next} as it was before the change. A writer walking a chain so reached a block it had
 * unlinked (and retired) before, linked its new entry after it, and the block, freed and used
 * again, later led from another chain into that entry: "expected an entry hashing to bucket 21
 * of 128 ..., found bucket 94" ({@code FailedWritesCrashTest}, direct mode at ASYNC with three
 * writers, about once in 190,000 points, where background syncs fail beside the writers).
 *
 * <p>Here one link waits, its every flush fails, and readers look it up between and during the
 * failures: the race is a few instructions wide, so the test repeats the failure many times and
 * counts the lookups that missed, which must be none.
 */
class FailedFlushVisibilityTest {
    @Test
    void aLinkWhoseFlushFailsIsNeverHiddenFromReaders() throws Exception {
        FaultyDevice faults = new FaultyDevice(new MemoryDevice());
        Storage storage = Storage.create(faults, ContainerConfig.builder().grain(64).logSize(0).build());
        Heap heap = storage.heap();
        SyncGate gate = new SyncGate(heap, new EntryCache(1 << 20), Integer.MAX_VALUE, null);
        long entry = heap.allocate(ByteBuffer.allocate(64));
        long target = heap.allocate(ByteBuffer.allocate(64));
        ReentrantReadWriteLock view = new ReentrantReadWriteLock();
        view.writeLock().lock();
        gate.setLink(entry, Entries.NEXT_OFFSET, target, 7, view, true); // the disk holds 0, never written
        view.writeLock().unlock();

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong lookups = new AtomicLong();
        AtomicLong missed = new AtomicLong();
        Thread[] readers = new Thread[2];
        for (int i = 0; i < readers.length; i++) {
            readers[i] = new Thread(() -> {
                while (!stop.get()) {
                    view.readLock().lock();
                    try {
                        if (gate.linkAt(entry, Entries.NEXT_OFFSET, 0) != target) {
                            missed.incrementAndGet();
                        }
                    } finally {
                        view.readLock().unlock();
                    }
                    lookups.incrementAndGet();
                }
            }, "reader-" + i);
            readers[i].start();
        }
        int failures = 0;
        try {
            for (int i = 0; i < 200_000 * Integer.getInteger("htod.test.scale", 1); i++) {
                faults.failWrite(1, FaultyDevice.Fault.IO_ERROR, false);
                try {
                    gate.flush();
                } catch (HtodException expected) {
                    failures++;
                }
            }
        } finally {
            stop.set(true);
            for (Thread t : readers) {
                t.join();
            }
            faults.heal();
        }
        System.out.println("FailedFlushVisibilityTest: " + failures + " failed flushes, " + lookups.get() + " lookups, "
                + missed.get() + " missed the link");
        assertTrue(failures > 0 && lookups.get() > 0, "flushes that failed and lookups: " + failures + ", " + lookups);
        assertEquals(0, missed.get(), "lookups that found the disk's value instead of the waiting link");
        gate.flush();
        assertEquals(null, gate.pendingLink(entry, Entries.NEXT_OFFSET), "nothing waits once a flush succeeds");
        ByteBuffer onDisk = ByteBuffer.allocate(8);
        heap.readAt(entry, Entries.NEXT_OFFSET, onDisk);
        assertEquals(target, onDisk.getLong(0), "the link, written at last");
        storage.close();
    }
}
