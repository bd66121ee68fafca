package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The entry cache against a model of the disk: random puts, hits, {@code next} rewrites and drops
 * over a few thousand handles in a cache far smaller than they are. A hit must hold exactly what
 * the model's block holds (never the bytes of a dropped block, never a {@code next} from before a
 * rewrite), and the bytes held must stay within the budget.
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
        long seed = System.nanoTime();
        try {
            run(seed);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("EntryCacheTest seed " + seed + ": " + e.getMessage(), e);
        }
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
                    cache.put(handle, onDisk.clone()); // a miss: the reader caches what it read
                } else {
                    hits++;
                    assertArrayEquals(onDisk, got, "a hit holds what the block holds");
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
                // at most one block (under 1.3 KiB) beyond each part's share of the budget
                assertEquals(cache.mappedBytes(), cache.bytes(), "the parts count the bytes the map holds");
                assertTrue(cache.bytes() <= BUDGET + 64 * (1300 + 96), "bytes held: " + cache.bytes());
            }
        }
        for (Map.Entry<Long, byte[]> e : disk.entrySet()) {
            byte[] got = cache.get(e.getKey());
            if (got != null) {
                hits++;
                assertArrayEquals(e.getValue(), got, "handle " + e.getKey());
            }
        }
        long[] counts = cache.counts();
        assertEquals(hits, counts[0], "hits counted");
        assertTrue(hits > 1000 && counts[1] > 1000, "the run hits and misses: " + hits + " hits, " + counts[1] + " misses");
    }
}
