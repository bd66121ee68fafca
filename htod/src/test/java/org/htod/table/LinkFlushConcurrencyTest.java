package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * Writers, readers and flushes all at once, with a flush every few links so that flushes write
 * links while writers and readers walk the same chains: each writer counts up its own keys (a
 * read-modify-write per increment, keys removed and put back now and then), readers check that a
 * counter they saw never goes back or disappears while its writer is still counting, and at the
 * end every counter holds exactly its increments, in a structure the verifier accepts, also after
 * a close and reopen. A link written by a flush while a chain is being read must never leave a
 * stale {@code next} in the entry cache.
 */
class LinkFlushConcurrencyTest {
    private static final int WRITERS = 4;
    private static final int KEYS = 300;
    private static final int INCREMENTS = 20_000 * Integer.getInteger("htod.test.scale", 1);

    private static byte[] key(int writer, int k) {
        return ("w" + writer + "/" + k).getBytes(StandardCharsets.UTF_8);
    }

    private static long count(StoredEntry e) {
        return e == null ? 0 : ByteBuffer.wrap(e.value()).getLong();
    }

    private static TableOptions opts(boolean syncEach, long cache) {
        return TableOptions.defaults().withSyncEachWrite(syncEach).withClock(() -> 0L).withCacheBytes(cache)
                .withMaxPendingLinks(6);
    }

    @Test
    void flushesRaceWithWritersAndReaders() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        TableStore ts = TableStore.open(Storage.create(disk, ContainerConfig.builder().grain(64).logSize(0).build()),
                opts(false, 64 << 10));
        HashtableOnDisk t = ts.table("c", true);
        long[][] expected = new long[WRITERS][KEYS];
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int id = w;
            writers.add(new Thread(() -> {
                try {
                    SplittableRandom r = new SplittableRandom(0xF1A5L + id);
                    for (int i = 0; i < INCREMENTS; i++) {
                        int k = r.nextInt(KEYS);
                        if (r.nextInt(50) == 0) {
                            t.update(key(id, k), cur -> cur == null ? null : Change.REMOVE);
                            expected[id][k] = 0;
                        }
                        t.update(key(id, k), cur -> Change.put(ByteBuffer.allocate(8).putLong(0, count(cur) + 1).array(), 0));
                        expected[id][k]++;
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }));
        }
        List<Thread> readers = new ArrayList<>();
        for (int rd = 0; rd < 2; rd++) {
            int id = rd;
            readers.add(new Thread(() -> {
                try {
                    SplittableRandom r = new SplittableRandom(0x2EADL + id);
                    while (writing.get()) {
                        int w = r.nextInt(WRITERS);
                        int k = r.nextInt(KEYS);
                        t.get(key(w, k)); // follows chains while flushes relink them; must not throw
                        for (java.util.Iterator<StoredEntry> it = t.iterator(false); it.hasNext() && r.nextInt(200) != 0;) {
                            it.next();
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }));
        }
        readers.forEach(Thread::start);
        writers.forEach(Thread::start);
        for (Thread th : writers) {
            th.join();
        }
        writing.set(false);
        for (Thread th : readers) {
            th.join();
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("a thread failed: " + errors.peek(), errors.peek());
            errors.forEach(e::addSuppressed);
            throw e;
        }
        check(t, expected);
        ts.verify(true);
        ts.close();
        TableStore again = TableStore.open(Storage.open(disk.reopen()), opts(false, 64 << 10));
        check(again.table("c", false), expected);
        again.verify(true);
        again.close();
    }

    private static void check(HashtableOnDisk t, long[][] expected) {
        long present = 0;
        for (int w = 0; w < WRITERS; w++) {
            for (int k = 0; k < KEYS; k++) {
                assertEquals(expected[w][k], count(t.get(key(w, k))), "counter w" + w + "/" + k);
                present += expected[w][k] > 0 ? 1 : 0;
            }
        }
        assertEquals(present, t.size());
        assertTrue(present > 0);
    }
}
