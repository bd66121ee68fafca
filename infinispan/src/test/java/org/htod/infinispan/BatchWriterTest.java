package org.htod.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * {@link BatchWriter}: in log mode an Infinispan batch over several segments is one htod
 * WriteBatch, all or none after a power cut at any write or sync of it; a batch beyond one log
 * record is cut into several; direct mode applies the same batch without WriteBatch; and the
 * batched removal that clear and removeSegments use.
 */
class BatchWriterTest {
    private static final int SEGMENTS = 16;

    /** Segments 0 to 3 hold a0..a9 before the batch. */
    private static Map<String, String> before() {
        Map<String, String> m = new TreeMap<>();
        for (int s = 0; s < 4; s++) {
            for (int i = 0; i < 10; i++) {
                m.put(s + "/a" + i, "old-" + s + "-" + i);
            }
        }
        return m;
    }

    /**
     * Overwrites in segments 0 and 1, new keys in segments 5 and 6 (whose maps do not exist yet),
     * removes in segment 2, a remove in segment 9 (no map), and a key written twice.
     */
    private static BatchWriter batch(Map<String, String> expectAfter) {
        BatchWriter b = new BatchWriter();
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < 5; i++) {
                write(b, expectAfter, s, "a" + i, "new-" + s + "-" + i + "-" + "x".repeat(300));
            }
        }
        for (int s = 5; s < 7; s++) {
            for (int i = 0; i < 8; i++) {
                write(b, expectAfter, s, "n" + i, "fresh-" + s + "-" + i);
            }
        }
        write(b, expectAfter, 3, "a0", "first");
        write(b, expectAfter, 3, "a0", "second");
        for (int i = 5; i < 10; i++) {
            b.remove(2, bytes("a" + i));
            expectAfter.remove(2 + "/a" + i);
        }
        b.remove(9, bytes("nothing"));
        return b;
    }

    private static void write(BatchWriter b, Map<String, String> model, int segment, String key, String value) {
        b.write(segment, bytes(key), bytes(value));
        model.put(segment + "/" + key, value);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void load(SegmentMaps maps, Map<String, String> content) {
        content.forEach((k, v) -> {
            String[] sk = k.split("/", 2);
            maps.forWrite(Integer.parseInt(sk[0])).put(bytes(sk[1]), bytes(v));
        });
    }

    /** Every entry of every segment, as "segment/key" to value. */
    private static Map<String, String> content(SegmentMaps maps) {
        Map<String, String> out = new TreeMap<>();
        for (int s = 0; s < SEGMENTS; s++) {
            HtodMap<byte[], byte[]> m = maps.forRead(s);
            if (m != null) {
                for (Map.Entry<byte[], byte[]> e : m.entrySet()) {
                    out.put(s + "/" + new String(e.getKey(), StandardCharsets.UTF_8),
                            new String(e.getValue(), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    private static Htod.Builder small(org.htod.core.device.BlockDevice dev) {
        return Htod.builder(dev).logSize(1 << 20).bufferSize(1 << 16).cacheSize(0);
    }

    @Test
    void aBatchIsAllOrNoneAfterAPowerCutAtAnyWriteOrSync() {
        int none = 0;
        int all = 0;
        int completed = 0;
        for (int cut = 1; cut <= 60; cut++) {
            long seed = 0xBA7C4000L + cut;
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk);
            Map<String, String> old = before();
            Map<String, String> after = new TreeMap<>(old);
            HtodStore store = small(dev).open();
            SegmentMaps maps = SegmentMaps.open(store, "crash", true, SEGMENTS);
            load(maps, old);
            BatchWriter b = batch(after);
            dev.armPowerCut(cut, Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
            boolean returned = false;
            try {
                assertEquals(1, b.apply(maps), "one WriteBatch");
                returned = true;
            } catch (HtodException e) {
                if (!dev.powerCut()) {
                    throw e;
                }
            }
            dev.crash(seed);
            try {
                store.close();
            } catch (HtodException expected) {
                // the device is gone
            }
            try (HtodStore again = small(disk.reopen()).open()) {
                assertTrue(again.verify().ok(), "cut " + cut + ": " + again.verify());
                Map<String, String> found = content(SegmentMaps.open(again, "crash", true, SEGMENTS));
                if (found.equals(after)) {
                    all++;
                } else if (found.equals(old) && !returned) {
                    none++;
                } else {
                    throw new AssertionError("cut " + cut + (returned ? ", after the batch returned" : "")
                            + ": neither the state before the batch nor the one after it:\n found " + found
                            + "\n before " + old + "\n after " + after);
                }
            }
            completed += returned ? 1 : 0;
        }
        System.out.printf("60 power cuts in one batch's writes: %d left none of it, %d all of it (%d after it returned)%n",
                none, all, completed);
        assertTrue(none > 0 && all > 0, "cuts both before and after the batch's record: " + none + " none, " + all + " all");
    }

    @Test
    void aBatchLargerThanOneLogRecordIsCommittedInParts() {
        try (HtodStore store = small(new MemoryDevice()).open()) {
            SegmentMaps maps = SegmentMaps.open(store, "big", true, SEGMENTS);
            long max = BatchWriter.maxBytes(store);
            BatchWriter b = new BatchWriter();
            Map<String, String> want = new TreeMap<>();
            byte[] value = new byte[10_000];
            int n = (int) (3 * max / value.length) + 1;
            for (int i = 0; i < n; i++) {
                b.write(i % SEGMENTS, bytes("k" + i), value);
                want.put(i % SEGMENTS + "/k" + i, new String(value, StandardCharsets.UTF_8));
            }
            int commits = b.apply(maps);
            assertTrue(commits >= 4 && commits <= 5, commits + " WriteBatches for " + n + " entries, "
                    + (long) n * value.length + " bytes, " + max + " bytes a record");
            assertEquals(want, content(maps));
        }
    }

    @Test
    void directModeAppliesTheSameBatchWithoutWriteBatch() {
        try (HtodStore store = small(new MemoryDevice()).directMode(true).open()) {
            assertFalse(store.logged());
            assertThrows(UnsupportedOperationException.class, store::batch);
            SegmentMaps maps = SegmentMaps.open(store, "direct", true, SEGMENTS);
            Map<String, String> after = before();
            load(maps, after);
            assertEquals(0, batch(after).apply(maps), "no WriteBatch in direct mode");
            assertEquals(after, content(maps));
        }
    }

    @Test
    void removeAllTakesTheKeysAskedForInBatches() {
        for (boolean direct : new boolean[] {false, true}) {
            try (HtodStore store = small(new MemoryDevice()).directMode(direct).open()) {
                SegmentMaps maps = SegmentMaps.open(store, "remove", true, SEGMENTS);
                HtodMap<byte[], byte[]> m = maps.forWrite(1);
                byte[] value = new byte[2_000];
                int n = 200; // in log mode about three WriteBatches of the 1 MiB log's 128 KiB records
                assertTrue(direct || (long) n * value.length > 2 * BatchWriter.maxBytes(store));
                for (int i = 0; i < n; i++) {
                    m.put(bytes("k" + i), value);
                }
                long removed = BatchWriter.removeAll(store, m, k -> k.length == 2); // k0 .. k9
                assertEquals(direct ? -1 : 10, removed);
                assertEquals(n - 10, m.size());
                assertNull(m.get(bytes("k7")));
                removed = BatchWriter.removeAll(store, m, null);
                assertEquals(direct ? -1 : n - 10, removed);
                assertTrue(m.isEmpty(), direct ? "direct" : "log");
            }
        }
    }
}
