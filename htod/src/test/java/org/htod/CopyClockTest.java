package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/**
 * A copy and an online compaction of a store whose clock runs behind the system's judge expiry by
 * the store's clock, as its reads do: an entry that lives by it is copied. They judged by the
 * system clock, and dropped it: after a compaction the store had silently lost a live entry.
 */
class CopyClockTest {
    private static final Clock BEHIND = Clock.fixed(Instant.parse("2020-01-01T00:00:00Z"), ZoneOffset.UTC);

    @Test
    void aCopyAndACompactionKeepWhatLivesByTheStoresClock() throws Exception {
        Path file = TestStores.tempFile("copy-clock");
        Path copy = TestStores.tempFile("copy-clock-copy");
        TestStores.delete(copy);
        try (HtodStore s = Htod.builder(file).clock(BEHIND).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put("ttl", "lives a year from 2020", Duration.ofDays(365));
            m.put("forever", "v");
            s.copyTo(copy, Progress.NONE);
            try (HtodStore c = Htod.builder(copy).clock(BEHIND).open()) {
                assertEquals("lives a year from 2020", c.map("m", Codec.string(), Codec.string()).get("ttl"), "copied");
            }
            s.compact(Progress.NONE);
            assertEquals("lives a year from 2020", m.get("ttl"), "kept by the compaction");
            assertEquals(2, m.size());
        } finally {
            TestStores.delete(file);
            TestStores.delete(copy);
        }
    }
}
