package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.htod.core.alloc.Heap;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.HeldDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.WriteLog;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What waits in the gate stays bounded, whatever the operations: puts, removals, replacements. */
class SyncGateTest {
    private static final int LIMIT = 16;
    private TableStore ts;
    private HashtableOnDisk t;

    @BeforeEach
    void open() {
        ts = TableStore.open(Storage.create(new MemoryDevice(), ContainerConfig.builder().grain(64).logSize(0).build()),
                TableOptions.defaults().withClock(() -> 0L).withCacheBytes(0).withMaxPendingLinks(LIMIT));
        t = ts.table("g", true);
    }

    @AfterEach
    void close() {
        ts.close();
    }

    private static byte[] key(int i) {
        return ("k" + i).getBytes(StandardCharsets.UTF_8);
    }

    /** Each operation sets one link (and a removal or replacement retires one block). */
    private void assertBounded(String what) {
        assertTrue(ts.gate().queued() < LIMIT, what + ": " + ts.gate().queued() + " links and blocks wait");
    }

    @Test
    void removalsAloneAreFlushed() {
        for (int i = 0; i < 40; i++) {
            t.update(key(i), cur -> Change.put(new byte[] {1}, 0));
        }
        ts.sync();
        long syncs = ts.syncCount();
        for (int i = 0; i < 40; i++) {
            t.update(key(i), cur -> Change.REMOVE);
            assertBounded("removal " + i);
        }
        assertTrue(ts.syncCount() > syncs, "forty removals flushed at least once");
        for (int i = 0; i < 40; i++) {
            assertNull(t.get(key(i)));
        }
        assertEquals(0, t.size());
    }

    @Test
    void replacementsOfOneKeyAreFlushed() {
        // one slot, rewritten again and again: one waiting link, but a retired block per replacement
        for (int i = 0; i < 100; i++) {
            byte[] v = {(byte) i};
            t.update(key(0), cur -> Change.put(v, 0));
            assertBounded("replacement " + i);
        }
        assertEquals(99, t.get(key(0)).value()[0]);
        ts.verify(true);
    }

    private static byte[] value(char c, int i) {
        return (c + "-" + i).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A flush writes the bucket slots it changes that lie close together in one segment as one
     * write, the slots between them written back as they are: the slots of 2,000 replacements
     * among 20,000 keys take about a write per page of slots (119 writes for 128 pages), where
     * they took a write per slot (1,481 with {@code slotRunBytes} 0); and every key, replaced or
     * not, reads back after a reopen.
     */
    @Test
    void aFlushWritesNearbySlotsAsOneRun() {
        MemoryDevice disk = new MemoryDevice();
        WriteLog dev = new WriteLog(disk);
        TableOptions opts = TableOptions.defaults().withClock(() -> 0L).withMaxPendingLinks(1 << 20);
        TableStore s = TableStore.open(Storage.create(dev, ContainerConfig.builder().grain(64).logSize(0).build()), opts);
        HashtableOnDisk g = s.table("runs", true);
        int keys = 20_000;
        for (int i = 0; i < keys; i++) {
            byte[] v = value('v', i);
            g.update(key(i), cur -> Change.put(v, 0));
        }
        s.sync();
        assertEquals(false, g.shape.doubling(), "the table is at its size");
        Set<Integer> replaced = new TreeSet<>();
        SplittableRandom r = new SplittableRandom(11);
        while (replaced.size() < 2_000) {
            replaced.add(r.nextInt(keys));
        }
        for (int i : replaced) {
            byte[] v = value('w', i);
            g.update(key(i), cur -> Change.put(v, 0));
        }
        dev.writes.clear();
        s.sync(); // one flush: its links, and the frees of the replaced entries
        BucketArray a = g.shape.array;
        int slotWrites = 0;
        long slotBytes = 0;
        for (long[] w : dev.writes) {
            for (long seg : a.segments) {
                long at = s.heap().address(seg);
                if (w[0] >= at && w[0] < at + s.heap().blockSize(seg)) {
                    slotWrites++;
                    slotBytes += w[1];
                }
            }
        }
        long pages = a.bucketCount * BucketArray.SLOT_SIZE / 4096;
        String report = replaced.size() + " replacements among " + keys + " keys, " + a.bucketCount + " buckets ("
                + pages + " pages of slots): the flush wrote the slots in " + slotWrites + " writes of " + slotBytes
                + " bytes, of " + dev.writes.size() + " writes in all";
        System.out.println("SyncGateTest: " + report);
        assertTrue(slotWrites >= 1, report);
        assertTrue(slotWrites <= 2 * pages, report);
        s.close();
        TableStore again = TableStore.open(Storage.open(disk.reopen()), opts);
        try {
            HashtableOnDisk g2 = again.table("runs", false);
            for (int i = 0; i < keys; i++) {
                assertArrayEquals(value(replaced.contains(i) ? 'w' : 'v', i), g2.get(key(i)).value(), "key " + i);
            }
            again.verify(true);
        } finally {
            again.close();
        }
    }

    /**
     * A sync that waits for a flush in flight is not ended by an interrupt: at SYNC a writer waits
     * there after its entry is written, and an interrupt thrown out of the wait, as before, told it
     * its write had failed while the write took effect. It waits on, makes its own flush once the
     * other ends, and returns with its interrupt set again.
     */
    @Test
    void aSyncInterruptedWhileAFlushIsInFlightWaitsOnAndKeepsItsInterrupt() throws Exception {
        HeldDevice dev = new HeldDevice(new MemoryDevice(), true, () -> true);
        Storage storage = Storage.create(dev, ContainerConfig.builder().grain(64).logSize(0).build());
        Heap heap = storage.heap();
        SyncGate gate = new SyncGate(heap, new EntryCache(1 << 20), Integer.MAX_VALUE, null);
        ReentrantReadWriteLock view = new ReentrantReadWriteLock();
        long a = heap.allocate(ByteBuffer.allocate(64));
        long b = heap.allocate(ByteBuffer.allocate(64));
        view.writeLock().lock();
        gate.setLink(a, Entries.NEXT_OFFSET, b, 1, view, true);
        view.writeLock().unlock();

        dev.arm();
        Thread flushing = new Thread(gate::flush, "flushing");
        flushing.start();
        assertTrue(dev.held.await(1, TimeUnit.MINUTES), "the flush reached its link write");
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean interruptKept = new AtomicBoolean();
        Thread syncing = new Thread(() -> {
            try {
                gate.sync();
                interruptKept.set(Thread.currentThread().isInterrupted());
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "syncing");
        syncing.start();
        while (syncing.getState() != Thread.State.WAITING) {
            assertTrue(syncing.isAlive(), "the sync waits for the flush in flight: " + thrown.get());
            Thread.sleep(1);
        }
        syncing.interrupt();
        while (syncing.isAlive() && (syncing.isInterrupted() || syncing.getState() != Thread.State.WAITING)) {
            Thread.sleep(1); // until the sync took the interrupt and waits again, or ended
        }
        assertTrue(syncing.isAlive(), "the interrupt ended the sync's wait: " + thrown.get());
        dev.release.countDown();
        flushing.join(60_000);
        syncing.join(60_000);
        assertNull(thrown.get(), "the interrupted sync");
        assertTrue(interruptKept.get(), "its interrupt, set again when it returned");
        assertEquals(1, gate.syncCount(), "the interrupted sync's own device sync (the flush before it, not durable, made none)");
        storage.close();
    }
}
