package org.htod;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a read costs in device I/O, counted, in both modes (see docs/READ-PATH.md): a get whose
 * entry is cached reads nothing (its bucket slot is held in memory); a get whose entry is not
 * cached reads the entry once, value included up to 256 KiB, and its slot's segment the first
 * time the segment is used; iterating keys reads the first page of each entry, never the rest of
 * its value.
 */
@ExtendWith(VerifyStores.class)
class ReadPathIoCountTest {
    private static final int KEYS = 300; // 512 buckets at the default load factor: one bucket segment

    private static IoCounts cost(CountingDevice dev, Runnable op) {
        dev.reset();
        op.run();
        return dev.counts();
    }

    private static Htod.Builder builder(CountingDevice dev, boolean direct) {
        // a 4 MiB log: values of 400 KB fit one log record
        return TestStores.small(dev).logSize(4L << 20).directMode(direct).durability(Durability.NONE).cacheSize(64L << 20);
    }

    private static byte[] value(int i, int size) {
        byte[] v = new byte[size];
        Arrays.fill(v, (byte) ('a' + i % 26));
        v[0] = (byte) i;
        return v;
    }

    /** A store of {@link #KEYS} small entries, closed cleanly: a reopen starts with nothing cached. */
    private static MemoryDevice filled(OpenedStores stores, boolean direct, int size) {
        MemoryDevice mem = new MemoryDevice();
        try (HtodStore s = stores.track(builder(new CountingDevice(mem), direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            for (int i = 0; i < KEYS; i++) {
                m.put("k" + i, value(i, size));
            }
        }
        return mem.reopen();
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aHitReadsNothingAndAMissReadsTheEntryOnce(boolean direct, OpenedStores stores) {
        MemoryDevice mem = filled(stores, direct, 100);
        CountingDevice dev = new CountingDevice(mem);
        try (HtodStore s = stores.track(builder(dev, direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            // Nothing cached: each entry is read once, whichever get reaches it first (a key's
            // get may pass over others of its chain), and the bucket segment once, whole.
            IoCounts first = cost(dev, () -> {
                for (int i = 0; i < KEYS; i++) {
                    assertArrayEquals(value(i, 100), m.get("k" + i));
                }
            });
            assertEquals(KEYS + 1, first.reads(), "every entry once and the bucket segment once: " + first);
            for (int i = 0; i < KEYS; i++) {
                int k = i;
                IoCounts hit = cost(dev, () -> assertArrayEquals(value(k, 100), m.get("k" + k)));
                assertEquals(0, hit.reads(), "a get whose entry is cached reads nothing: " + hit);
            }
            IoCounts absent = cost(dev, () -> {
                for (int i = 0; i < KEYS; i++) {
                    assertEquals(null, m.get("absent" + i));
                }
            });
            assertEquals(0, absent.reads(), "gets of absent keys over cached chains read nothing: " + absent);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void anEntryUnderTheWholeLimitIsCachedWhole(boolean direct, OpenedStores stores) {
        // A 64 MiB cache keeps entries of up to 384 KiB whole (a 128th of the 48 MiB the entries
        // hold at least): a second get reads nothing.
        MemoryDevice mem = new MemoryDevice();
        try (HtodStore s = stores.track(builder(new CountingDevice(mem), direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            m.put("mid", value(5, 12_000));
            m.put("big", value(9, 300_000));
            m.put("over", value(6, 400_000));
        }
        mem = mem.reopen();
        CountingDevice dev = new CountingDevice(mem);
        try (HtodStore s = stores.track(builder(dev, direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            m.containsKey("absent"); // loads the bucket segment
            IoCounts miss = cost(dev, () -> assertArrayEquals(value(5, 12_000), m.get("mid")));
            assertEquals(1, miss.reads(), "the entry whole in one read: " + miss);
            IoCounts hit = cost(dev, () -> assertArrayEquals(value(5, 12_000), m.get("mid")));
            assertEquals(0, hit.reads(), "cached whole: " + hit);
            // past the largest read whole on a miss (256 KiB): its fields and key, then the rest
            IoCounts bigMiss = cost(dev, () -> assertArrayEquals(value(9, 300_000), m.get("big")));
            assertEquals(2, bigMiss.reads(), "its first bytes, then the rest: " + bigMiss);
            IoCounts bigHit = cost(dev, () -> assertArrayEquals(value(9, 300_000), m.get("big")));
            assertEquals(0, bigHit.reads(), "cached whole since: " + bigHit);
            m.get("over");
            IoCounts over = cost(dev, () -> assertArrayEquals(value(6, 400_000), m.get("over")));
            assertEquals(1, over.reads(), "past the limit only its first bytes are kept: " + over);
            assertTrue(over.bytesRead() < 400_000, "only the value past its first bytes: " + over);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aHeadCachedByAKeyWalkIsReadWholeOnceByAGet(boolean direct, OpenedStores stores) {
        // Iterating keys caches the entry's fields and key only; a get then reads the entry
        // whole, once, and keeps it whole, instead of reading its value at every get. A key too
        // long for the first read (HEAD_READ) is read by a second one that ends where the key
        // does: the get keeps that entry whole too.
        for (String key : List.of("mid", "k".repeat(600))) {
            MemoryDevice mem = new MemoryDevice();
            try (HtodStore s = stores.track(builder(new CountingDevice(mem), direct).open(), mem)) {
                s.map("m", Codec.string(), Codec.bytes()).put(key, value(8, 12_000));
            }
            mem = mem.reopen();
            CountingDevice dev = new CountingDevice(mem);
            try (HtodStore s = stores.track(builder(dev, direct).open(), mem)) {
                HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
                assertEquals(java.util.Set.of(key), new java.util.HashSet<>(m.keySet()));
                IoCounts first = cost(dev, () -> assertArrayEquals(value(8, 12_000), m.get(key)));
                assertEquals(1, first.reads(), "the entry whole, once: " + first);
                for (int i = 0; i < 3; i++) {
                    IoCounts hit = cost(dev, () -> assertArrayEquals(value(8, 12_000), m.get(key)));
                    assertEquals(0, hit.reads(), "kept whole since (key of " + key.length() + " bytes): " + hit);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aMissOnALargeEntryIsOneRead(boolean direct, OpenedStores stores) {
        MemoryDevice mem = new MemoryDevice();
        try (HtodStore s = stores.track(builder(new CountingDevice(mem), direct).open(), mem)) {
            s.map("m", Codec.string(), Codec.bytes()).put("big", value(7, 100_000));
        }
        mem = mem.reopen();
        CountingDevice dev = new CountingDevice(mem);
        try (HtodStore s = stores.track(builder(dev, direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            IoCounts miss = cost(dev, () -> assertArrayEquals(value(7, 100_000), m.get("big")));
            assertEquals(2, miss.reads(), "the bucket segment, then the entry whole in one read: " + miss);
            IoCounts again = cost(dev, () -> assertArrayEquals(value(7, 100_000), m.get("big")));
            assertEquals(0, again.reads(), "under the whole limit, kept whole: " + again);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void iteratingKeysReadsNoValueOfALargeEntry(boolean direct, OpenedStores stores) {
        int size = 50_000;
        MemoryDevice mem = filled(stores, direct, size);
        CountingDevice dev = new CountingDevice(mem);
        try (HtodStore s = stores.track(builder(dev, direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            Set<String> keys = new HashSet<>();
            IoCounts ik = cost(dev, () -> keys.addAll(m.keySet()));
            assertEquals(KEYS, keys.size());
            // a read per entry (of an entry over a page, its fields and key only: HEAD_READ bytes)
            // and the bucket segment (512 slots of 16 bytes)
            assertEquals(KEYS + 1, ik.reads(), "one read per entry and the segment: " + ik);
            assertTrue(ik.bytesRead() <= KEYS * 512L + 512 * 16, "key iteration read value bytes: " + ik);
            IoCounts again = cost(dev, () -> keys.addAll(m.keySet()));
            assertEquals(0, again.reads(), "a second key iteration is served from the caches: " + again);
        }
    }

    /**
     * A blind write ({@code set}, {@code delete}) reads the fields and key of the key's entry, for
     * its version and expiry, none of a value whose entry is over a page; {@code put}, which returns the old
     * value, reads it whole. Each is measured first after a reopen (nothing cached, nothing
     * buffered, so no install runs meanwhile).
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void blindWritesReadNoValueOfALargeEntry(boolean direct, OpenedStores stores) {
        MemoryDevice mem = new MemoryDevice();
        try (HtodStore s = stores.track(builder(new CountingDevice(mem), direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            m.put("a", value(1, 100_000));
            m.put("b", value(2, 100_000));
            m.put("c", value(3, 100_000));
        }
        byte[] small = value(9, 10);
        String[] ops = {"set", "delete", "put"};
        for (String op : ops) {
            mem = mem.reopen();
            CountingDevice dev = new CountingDevice(mem);
            try (HtodStore s = stores.track(builder(dev, direct).open(), mem)) {
                HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
                IoCounts c = cost(dev, () -> {
                    switch (op) {
                        case "set" -> m.set("a", small);
                        case "delete" -> assertTrue(m.delete("b"));
                        default -> assertArrayEquals(value(3, 100_000), m.put("c", small));
                    }
                });
                // the entry's fields and key (HEAD_READ: 512 bytes, where its first page was 4,096)
                // and the bucket segment of this small table (about 1 KiB)
                long bound = 512 + 2048;
                if (op.equals("put")) {
                    assertTrue(c.bytesRead() >= 100_000, "put reads the old value whole: " + c);
                } else {
                    assertTrue(c.bytesRead() <= bound, op + " read value bytes: " + c);
                }
            }
        }
        mem = mem.reopen();
        try (HtodStore s = stores.track(builder(new CountingDevice(mem), direct).open(), mem)) {
            HtodMap<String, byte[]> m = s.map("m", Codec.string(), Codec.bytes());
            assertArrayEquals(small, m.get("a"));
            assertNull(m.get("b"));
            assertArrayEquals(small, m.get("c"));
            assertFalse(m.delete("b"), "delete of an absent key");
            assertEquals(2, m.version("a"), "a blind write takes the next version");
        }
    }
}
