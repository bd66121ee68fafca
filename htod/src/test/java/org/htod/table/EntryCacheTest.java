package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.core.Seeds;
import org.junit.jupiter.api.Test;

/**
 * The entry cache against a model of the disk: random puts, hits, {@code next} rewrites and drops
 * over a few thousand handles in a cache far smaller than they are. A hit must hold exactly what
 * the model's block holds (never the bytes of a dropped block, never a {@code next} from before a
 * rewrite), and the bytes held must stay within the budget. Then the same with readers running
 * beside the writer, which the index must never answer with another handle's bytes, a dropped
 * block's, or a {@code next} from before a rewrite that finished before the lookup began.
 */
class EntryCacheTest {
    private static final int HANDLES = 4000;
    private static final long BUDGET = 256 << 10;

    private static byte[] block(SplittableRandom r, long handle, int generation) {
        byte[] b = new byte[64 + r.nextInt(1200)];
        ByteBuffer.wrap(b).putLong(Entries.NEXT_OFFSET, r.nextLong()).putLong(16, handle).putInt(24, generation);
        return b;
    }

    @Test
    void randomOperationsAgainstAModelOfTheDisk() {
        Seeds.run("EntryCacheTest", EntryCacheTest::run);
    }

    private static void run(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        EntryCache cache = new EntryCache(BUDGET);
        Map<Long, byte[]> disk = new HashMap<>(); // what each allocated block holds
        int generation = 0;
        long hits = 0;
        for (int op = 0; op < 200_000; op++) {
            long handle = 1 + r.nextInt(HANDLES);
            byte[] onDisk = disk.get(handle);
            int what = r.nextInt(100);
            if (onDisk == null) {
                if (what < 50) {
                    byte[] b = block(r, handle, ++generation);
                    disk.put(handle, b);
                }
                assertNull(cache.get(handle), "a handle with no block has nothing cached");
            } else if (what < 45) {
                byte[] got = cache.get(handle);
                if (got == null) {
                    // a miss: the reader caches what it read, the block whole or its first bytes
                    int len = r.nextBoolean() ? onDisk.length : 64 + r.nextInt(onDisk.length - 63);
                    cache.put(handle, Arrays.copyOf(onDisk, len));
                } else {
                    hits++;
                    assertTrue(got.length <= onDisk.length, "a hit is no longer than its block");
                    assertArrayEquals(Arrays.copyOf(onDisk, got.length), got, "a hit holds what the block holds");
                    if (got.length < onDisk.length && r.nextBoolean()) {
                        cache.put(handle, onDisk.clone()); // read whole: replaces the first bytes
                        byte[] again = cache.get(handle); // null if the put's eviction took it
                        if (again != null) {
                            hits++;
                            assertArrayEquals(onDisk, again, "the whole block replaced its first bytes");
                        }
                    }
                }
            } else if (what < 75) {
                long next = r.nextLong();
                int check = r.nextInt();
                ByteBuffer.wrap(onDisk).putLong(Entries.NEXT_OFFSET, next).putInt(Entries.NEXT_CHECK_OFFSET, check);
                cache.next(handle, next, check);
            } else {
                cache.drop(handle); // before the free, as the tables do
                disk.remove(handle);
            }
            if (op % 1000 == 0) {
                // at most an eighth over the budget, and one block (under 1.3 KiB) per part
                assertEquals(cache.mappedBytes(), cache.bytes(), "the parts count the bytes the map holds");
                assertTrue(cache.bytes() <= BUDGET + BUDGET / 8 + 64 * (1300 + 96), "bytes held: " + cache.bytes());
            }
        }
        for (Map.Entry<Long, byte[]> e : disk.entrySet()) {
            byte[] got = cache.get(e.getKey());
            if (got != null) {
                hits++;
                assertArrayEquals(Arrays.copyOf(e.getValue(), got.length), got, "handle " + e.getKey());
            }
        }
        long[] counts = cache.counts();
        assertEquals(hits, counts[0], "hits counted");
        assertTrue(hits > 1000 && counts[1] > 1000, "the run hits and misses: " + hits + " hits, " + counts[1] + " misses");
    }

    @Test
    void lockFreeLookupsBesideAWriterNeverSeeStaleBytes() throws Exception {
        Seeds.run("EntryCacheTest concurrent", EntryCacheTest::runConcurrent);
    }

    /**
     * One writer allocates, caches, rewrites {@code next} and drops blocks of 2,000 handles in a
     * cache of 64 KiB (so its parts' indexes grow, shrink and close gaps all the time), as the
     * tables do under their locks; two readers look handles up meanwhile. Every {@code next} the
     * writer writes, and every block it allocates, takes a stamp from one rising counter; once a
     * rewrite or a drop has returned, the writer publishes the least stamp and generation a lookup
     * of that handle may still return. Readers put nothing: a reader's miss caches under the
     * table's view lock, which the link writes exclude.
     */
    private static void runConcurrent(long seed) throws Exception {
        int handles = 2000;
        EntryCache cache = new EntryCache(64 << 10);
        AtomicLongArray minNext = new AtomicLongArray(handles + 1);
        AtomicIntegerArray minGeneration = new AtomicIntegerArray(handles + 1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] readerHits = new long[2];
        AtomicBoolean done = new AtomicBoolean();
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            int id = t;
            Thread reader = new Thread(() -> {
                SplittableRandom r = new SplittableRandom(seed + 1 + id);
                try {
                    while (!done.get()) {
                        int h = 1 + r.nextInt(handles);
                        long leastNext = minNext.get(h);
                        int leastGeneration = minGeneration.get(h);
                        byte[] got = cache.get(h);
                        if (got != null) {
                            readerHits[id]++;
                            ByteBuffer b = ByteBuffer.wrap(got);
                            assertEquals(h, b.getLong(16), "a lookup of handle " + h + " found another handle's bytes");
                            assertTrue(b.getInt(24) >= leastGeneration, "handle " + h + ": generation " + b.getInt(24)
                                    + " after a drop that left at least " + leastGeneration);
                            assertTrue(b.getLong(Entries.NEXT_OFFSET) >= leastNext, "handle " + h + ": next "
                                    + b.getLong(Entries.NEXT_OFFSET) + " after a rewrite to " + leastNext);
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            readers.add(reader);
            reader.start();
        }
        SplittableRandom r = new SplittableRandom(seed);
        Map<Integer, byte[]> disk = new HashMap<>();
        long stamp = 0;
        int generation = 0;
        try {
            for (int op = 0; op < 300_000 && failure.get() == null; op++) {
                int h = 1 + r.nextInt(handles);
                byte[] onDisk = disk.get(h);
                int what = r.nextInt(100);
                if (onDisk == null) {
                    byte[] b = new byte[64 + r.nextInt(600)];
                    ByteBuffer.wrap(b).putLong(Entries.NEXT_OFFSET, ++stamp).putLong(16, h).putInt(24, ++generation);
                    disk.put(h, b);
                } else if (what < 50) {
                    if (cache.get(h) == null) {
                        cache.put(h, onDisk.clone());
                    }
                } else if (what < 80) {
                    long next = ++stamp;
                    ByteBuffer.wrap(onDisk).putLong(Entries.NEXT_OFFSET, next);
                    cache.next(h, next, 0);
                    minNext.set(h, next);
                } else {
                    cache.drop(h);
                    disk.remove(h);
                    minGeneration.set(h, generation + 1); // any block allocated later has a later generation
                }
            }
        } finally {
            done.set(true);
            for (Thread t : readers) {
                t.join();
            }
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get().getMessage(), failure.get());
        }
        assertEquals(cache.mappedBytes(), cache.bytes(), "the parts count the bytes their indexes hold");
        assertTrue(readerHits[0] + readerHits[1] > 1000, "the readers hit: " + readerHits[0] + ", " + readerHits[1]);
    }


    /**
     * A reader that loaded a part's index just before a resize replaced it looks up through the old
     * table: it may miss, but it must not find a block dropped after the resize, whose removal
     * only the new table saw.
     */
    @Test
    void aReaderOfAReplacedIndexNeverFindsABlockDroppedSince() {
        EntryCache cache = new EntryCache(64L << 20);
        long first = 1;
        Object index = cache.indexOf(first);
        byte[] b = new byte[100];
        cache.put(first, b);
        Object before = cache.indexOf(first);
        List<Long> samePart = new ArrayList<>();
        for (long h = 2; cache.indexOf(first) == before; h++) {
            cache.put(h, new byte[100]);
            if (cache.indexOf(h) == cache.indexOf(first)) {
                samePart.add(h);
            }
        }
        assertTrue(samePart.size() > 2, "a resize of the part's index took a few insertions: " + samePart);
        assertTrue(index != cache.indexOf(first), "the index was replaced");
        cache.drop(first);
        assertNull(cache.get(first), "dropped");
        assertNull(cache.getThrough(before, first), "a reader of the replaced index found a block dropped since the resize");
    }

    /**
     * The entry cache holds what the slots beside it leave: all of the store's cache while no
     * slots are held, and gives back the slots' share, part by part, once they are.
     */
    @Test
    void theEntryCacheHoldsWhatTheSlotsLeave() {
        long total = 4L << 20;
        SlotCache slots = new SlotCache(total / 4);
        EntryCache cache = new EntryCache(total, slots);
        long handle = 1;
        for (; cache.bytes() < total - 64 * 4096; handle++) {
            cache.put(handle, new byte[1000]);
        }
        assertTrue(cache.bytes() > total * 3 / 4 + 64 * 4096, "the slots' unused share is the entries': " + cache.bytes());
        slots.fresh(1L << 40, (int) (total / 4 / 8)); // the slots fill their budget
        assertEquals(total / 4, slots.bytes());
        for (long i = 0; i < 100_000; i++) {
            cache.put(handle++, new byte[1000]);
        }
        assertEquals(cache.mappedBytes(), cache.bytes(), "the parts count the bytes their indexes hold");
        assertTrue(cache.bytes() <= total * 3 / 4 + 64 * (1000 + 96),
                "entries and slots together within the cache: " + cache.bytes() + " + " + slots.bytes());
    }
}
