package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A log-mode store whose file was cut short (a copy that stopped, a truncation) at places over its
 * last 200 KB. An open that succeeds (a log-mode open reads no block headers, so a cut below its
 * checkpoint block goes unseen) is followed by a verify that reports the damage with where, or,
 * where the cut took only bytes the store does not use, reads every entry; and a salvage falls
 * back to its scan. Both threw untyped exceptions (a buffer of a negative length, a header read
 * past the end of the file), and the salvage gave up instead of scanning.
 */
class TruncatedStoreTest {
    private static final int ENTRIES = 3_000;

    private static String value(int i) {
        return "value " + i + " " + "x".repeat(i % 200);
    }

    @Test
    void aStoreCutShortIsReportedByVerifyAndSalvagedByScan() throws Exception {
        MemoryDevice d = new MemoryDevice();
        try (HtodStore s = Htod.builder(d).durability(Durability.NONE).open()) {
            HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
            for (int i = 0; i < ENTRIES; i++) {
                m.put(i, value(i));
            }
            s.checkpoint(); // the checkpoint block below the entries the close adds
        }
        MemoryDevice closed = d.reopen();
        byte[] whole = new byte[(int) closed.size()];
        closed.read(0, ByteBuffer.wrap(whole));
        int found = 0;
        byte[] firstFound = null;
        for (int by = 997; by < 200_000; by += 7_979) {
            byte[] cut = Arrays.copyOf(whole, whole.length - by);
            MemoryDevice c = new MemoryDevice();
            c.write(0, ByteBuffer.wrap(cut));
            try (HtodStore s = Htod.builder(c).readOnly(true).open()) {
                VerifyReport v = s.verify();
                if (v.ok()) { // the cut took only bytes past what the store uses: all there
                    HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
                    for (int i = 0; i < ENTRIES; i++) {
                        assertEquals(value(i), m.get(i), "cut of " + by);
                    }
                    continue;
                }
                assertTrue(v.problems().get(0).offset() > 0, "a cut of " + by + " bytes found, with where: " + v);
                found++;
                firstFound = firstFound == null ? cut : firstFound;
            } catch (HtodException refused) {
                // the open found the cut itself
            }
        }
        assertTrue(found > 0, "cuts that open are found by the verify");
        Path file = TestStores.tempFile("truncated");
        Path target = TestStores.tempFile("truncated-salvaged");
        TestStores.delete(target);
        try {
            Files.write(file, firstFound);
            CopyReport r = Htod.salvage(file, target, Progress.NONE);
            assertEquals("scan", r.method(), r.toString());
            assertTrue(r.entries() > ENTRIES / 2, "entries kept: " + r);
        } finally {
            TestStores.delete(file);
            TestStores.delete(target);
        }
    }
}
