package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.core.device.CountingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * In log mode a key and its value go in one log record, of at most 1/8 of the log region. With
 * the smallest log (64 KiB) a record holds about 8 KiB: a value's limit depends on its key, and
 * was once computed for a key of the largest size, 64 KiB, which left no room for any value at
 * all in a log under about 520 KiB.
 */
@ExtendWith(VerifyStores.class)
class LogRecordLimitTest {
    @Test
    void aSmallLogTakesValuesUpToWhatOneRecordHoldsBesideTheKey(OpenedStores stores) {
        MemoryDevice mem = new MemoryDevice();
        CountingDevice dev = new CountingDevice(mem);
        try (HtodStore s = stores.track(Htod.builder(dev).grain(64).logSize(64 << 10).durability(Durability.SYNC).open(),
                mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            long max = s.maxValueBytes("k".length());
            assertTrue(max > 7000, "a 64 KiB log holds values of about 8 KiB under a short key, found " + max);
            assertEquals(0, s.maxValueBytes(), "no value fits beside a key of the largest size");
            m.put("small", new byte[300]);
            byte[] big = new byte[(int) max];
            big[7] = 7;
            m.put("k", big);
            assertEquals(7, m.get("k")[7]);
            WriteBatch b = s.batch().put(m, "k", new byte[(int) max]);
            assertEquals(1, b.commit());
            dev.reset();
            assertThrows(EntryTooLargeException.class, () -> m.put("k", new byte[(int) max + 1]));
            assertThrows(EntryTooLargeException.class, () -> m.put("kk", new byte[(int) max]));
            assertThrows(EntryTooLargeException.class, () -> s.batch().put(m, "kk", new byte[(int) max]));
            assertEquals(0, dev.counts().writes(), "refused before anything is written");
            assertEquals(2, m.size());
        }
    }
}
