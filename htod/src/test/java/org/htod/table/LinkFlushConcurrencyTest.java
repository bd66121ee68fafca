package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * Writers, readers and flushes all at once, with a flush every few links so that flushes write
 * links while writers and readers walk the same chains. Each writer counts up its own keys (a
 * read-modify-write per increment); now and then it removes a key and starts it again in a new
 * epoch. A value is (epoch, count), so every state a key goes through is greater than the one
 * before. Readers check, against what the writers publish after each completed operation and
 * before each removal:
 *
 * <ul>
 *   <li>a lookup never returns a state older than the last one completed before it began, nor one
 *       older than the reader saw before (a counter never goes back);
 *   <li>a lookup finds a counter absent only if its writer had begun to remove it (a counter never
 *       disappears while its writer is still counting);
 *   <li>a full iteration returns each key at most once, never an older state than completed
 *       before it began, and every key present when it began and not removed while it ran.
 * </ul>
 *
 * At the end every counter holds exactly its increments, in a structure the verifier accepts,
 * also after a close and reopen. A link written by a flush while a chain is being read must never
 * leave a stale {@code next} in the entry cache or hide a waiting link from a reader.
 */
class LinkFlushConcurrencyTest {
    private static final int WRITERS = 4;
    private static final int KEYS = 300;
    private static final int INCREMENTS = 20_000 * Integer.getInteger("htod.test.scale", 1);
    /** Lookups (an iteration counts as its entries) each reader makes at least, however fast the writers. */
    private static final int MIN_CHECKS = 20_000;

    /** Per key (writer * KEYS + k): the state of the last completed write, and removals begun. */
    private final AtomicLongArray done = new AtomicLongArray(WRITERS * KEYS);
    private final AtomicLongArray removals = new AtomicLongArray(WRITERS * KEYS);
    private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

    private static byte[] key(int writer, int k) {
        return ("w" + writer + "/" + k).getBytes(StandardCharsets.UTF_8);
    }

    private static int index(byte[] key) {
        String[] p = new String(key, StandardCharsets.UTF_8).substring(1).split("/");
        return Integer.parseInt(p[0]) * KEYS + Integer.parseInt(p[1]);
    }

    /** The state a value holds: epoch in the high half, count in the low. */
    private static long state(StoredEntry e) {
        if (e == null) {
            return 0;
        }
        ByteBuffer b = ByteBuffer.wrap(e.value());
        return b.getLong(0) << 32 | b.getLong(8);
    }

    private static long count(long state) {
        return state & 0xFFFF_FFFFL;
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
        AtomicBoolean writing = new AtomicBoolean(true);
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int id = w;
            writers.add(new Thread(() -> guard(() -> write(t, id, expected[id]))));
        }
        List<Thread> readers = new ArrayList<>();
        for (int rd = 0; rd < 2; rd++) {
            int id = rd;
            readers.add(new Thread(() -> guard(() -> read(t, id, writing))));
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

    private void guard(Runnable body) {
        try {
            body.run();
        } catch (Throwable e) {
            errors.add(e);
        }
    }

    private void write(HashtableOnDisk t, int id, long[] expected) {
        SplittableRandom r = new SplittableRandom(0xF1A5L + id);
        long[] epoch = new long[KEYS];
        for (int i = 0; i < INCREMENTS && errors.isEmpty(); i++) {
            int k = r.nextInt(KEYS);
            int at = id * KEYS + k;
            if (r.nextInt(50) == 0) {
                removals.set(at, ++epoch[k]); // before the removal: readers may find the key gone from now on
                t.update(key(id, k), cur -> cur == null ? null : Change.REMOVE);
                expected[k] = 0;
                done.set(at, epoch[k] << 32);
            }
            long e = epoch[k];
            t.update(key(id, k), cur -> Change.put(ByteBuffer.allocate(16).putLong(0, e)
                    .putLong(8, count(state(cur)) + 1).array(), 0));
            expected[k]++;
            done.set(at, e << 32 | expected[k]);
        }
    }

    /** Lookups and iterations until the writers are done, and at least {@link #MIN_CHECKS} of them. */
    private void read(HashtableOnDisk t, int id, AtomicBoolean writing) {
        SplittableRandom r = new SplittableRandom(0x2EADL + id);
        long[] seen = new long[WRITERS * KEYS];
        long checks = 0;
        while ((writing.get() || checks < MIN_CHECKS) && errors.isEmpty()) {
            int w = r.nextInt(WRITERS);
            int k = r.nextInt(KEYS);
            int at = w * KEYS + k;
            long before = done.get(at);
            long s = state(t.get(key(w, k)));
            long removing = removals.get(at);
            String who = "reader " + id + ", counter w" + w + "/" + k;
            if (s == 0) {
                long last = Math.max(before, seen[at]);
                assertTrue(count(last) == 0 || removing > last >>> 32, who + " is gone, though its writer had not begun"
                        + " to remove it since state " + Long.toHexString(last));
            } else {
                assertTrue(s >= before, who + ": state " + Long.toHexString(s) + ", older than "
                        + Long.toHexString(before) + " written before the lookup");
                assertTrue(s >= seen[at], who + " went back from " + Long.toHexString(seen[at]) + " to "
                        + Long.toHexString(s));
                seen[at] = s;
            }
            checks++;
            if (r.nextInt(30) == 0) {
                checks += iterate(t, id);
            }
            Thread.yield(); // the writers set the pace: two cores, six threads
        }
    }

    /** One full iteration, checked against the states completed before it and the removals during it. */
    private long iterate(HashtableOnDisk t, int id) {
        long[] before = new long[WRITERS * KEYS];
        for (int i = 0; i < before.length; i++) {
            before[i] = done.get(i);
        }
        Set<Integer> found = new HashSet<>();
        for (Iterator<StoredEntry> it = t.iterator(true); it.hasNext();) {
            StoredEntry e = it.next();
            int at = index(e.key());
            assertTrue(found.add(at), "reader " + id + ": iteration returned " + new String(e.key(), StandardCharsets.UTF_8)
                    + " twice");
            assertTrue(state(e) >= before[at], "reader " + id + ": iteration returned "
                    + new String(e.key(), StandardCharsets.UTF_8) + " in a state older than one completed before it");
        }
        for (int i = 0; i < before.length; i++) {
            // removals counts the removals begun, so it equals the epoch of a state no removal has followed
            if (count(before[i]) > 0 && removals.get(i) == before[i] >>> 32) {
                assertTrue(found.contains(i), "reader " + id + ": iteration missed w" + i / KEYS + "/" + i % KEYS
                        + ", present all along");
            }
        }
        return found.size();
    }

    private static void check(HashtableOnDisk t, long[][] expected) {
        long present = 0;
        for (int w = 0; w < WRITERS; w++) {
            for (int k = 0; k < KEYS; k++) {
                assertEquals(expected[w][k], count(state(t.get(key(w, k)))), "counter w" + w + "/" + k);
                present += expected[w][k] > 0 ? 1 : 0;
            }
        }
        assertEquals(present, t.size());
        assertTrue(present > 0);
    }
}
