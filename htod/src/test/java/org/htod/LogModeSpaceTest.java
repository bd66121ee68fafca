package org.htod;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The space a log-mode store takes under churn stays in proportion to what it holds. Log mode
 * once never coalesced (its frees write nothing, and the direct path's merge read them back as
 * allocated), and then coalesced only when the free total grew, which churn at a steady size never
 * makes it do: the heap grew by the size of the values put, 80 MB (then 55 MB) for 12 MB held
 * after 100,000 puts, without end. A space bound, not a time: counts bytes.
 */
class LogModeSpaceTest {
    @TempDir
    Path dir;

    @Test
    void churnAtASteadySizeKeepsTheHeapInProportion() {
        try (HtodStore s = Htod.builder(dir.resolve("churn.htod")).durability(Durability.NONE).open()) {
            HtodMap<Long, byte[]> m = s.map("m", Codecs.LONGS, Codecs.BYTES);
            SplittableRandom r = new SplittableRandom(0x5bace);
            int[] sizes = new int[3000];
            long live = 0;
            for (int op = 1; op <= 100_000; op++) {
                int k = r.nextInt(sizes.length);
                // a quarter small values, the rest 1 KB to 60 KB with a long tail, as page fragments are
                int len = r.nextInt(4) == 0 ? 50 + r.nextInt(300)
                        : 1000 + (int) Math.min(60_000, 1000 / Math.pow(r.nextDouble() + 1e-3, 0.9));
                byte[] v = new byte[len];
                Arrays.fill(v, (byte) op);
                m.put((long) k, v);
                live += len - sizes[k];
                sizes[k] = len;
            }
            s.checkpoint();
            StoreStats.Space space = s.stats().space();
            assertTrue(space.heapUsedBytes() < 3.5 * live, "the heap takes " + space.heapUsedBytes() + " bytes for "
                    + live + " bytes of values: " + space);
            VerifyReport v = s.verify();
            assertTrue(v.ok(), v.toString());
        }
    }
}
