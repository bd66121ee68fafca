package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.htod.core.device.CountingDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * What each map operation costs in device I/O, counted (direct mode, TS): the paper's "one seek
 * to write the data, one to update the hash index" plus the syncs that order them.
 */
class HtodIoCountTest {

    private static IoCounts cost(CountingDevice dev, Runnable op) {
        dev.reset();
        op.run();
        return dev.counts();
    }

    @Test
    void costsPerOperation() {
        MemoryDevice mem = new MemoryDevice();
        CountingDevice dev = new CountingDevice(mem);
        try (HtodStore s = TestStores.small(dev).durability(Durability.NONE).cacheSize(0).open()) {
            HtodMap<String, String> m = s.map("io", Codec.string(), Codec.string());
            m.put("warm", "up");

            IoCounts put = cost(dev, () -> m.put("a", "1"));
            // read the (empty) slot; write the entry; sync; write the slot
            assertEquals(1, put.reads(), "put of a new key into an empty bucket: reads " + put);
            assertEquals(2, put.writes(), "writes " + put);
            assertEquals(1, put.syncs(), "syncs " + put);

            IoCounts get = cost(dev, () -> m.get("a"));
            assertEquals(2, get.reads(), "get: the slot, then the entry (key and value in its first read) " + get);
            assertEquals(0, get.writes());

            IoCounts miss = cost(dev, () -> m.get("absent")); // its bucket is empty
            assertEquals(1, miss.reads(), "a miss on an empty bucket reads the slot only " + miss);

            IoCounts replace = cost(dev, () -> m.put("a", "2"));
            // slot, entry; new entry; sync; slot. The old entry is freed at the next sync.
            assertEquals(2, replace.reads(), "replace reads " + replace);
            assertEquals(2, replace.writes(), "replace writes " + replace);
            assertEquals(1, replace.syncs(), "replace syncs " + replace);

            IoCounts remove = cost(dev, () -> m.remove("a"));
            assertEquals(2, remove.reads(), "remove reads " + remove);
            assertEquals(1, remove.writes(), "remove: one link write " + remove);
            assertEquals(0, remove.syncs(), "remove syncs " + remove);

            IoCounts sync = cost(dev, s::sync);
            // the headers of the map and of the catalog (its count changed when the map was
            // created) with their counts, the device sync, then the frees of the two unlinked entries
            assertEquals(4, sync.writes(), "sync writes " + sync);
            assertEquals(1, sync.syncs(), "sync syncs " + sync);
        }
        dev = new CountingDevice(mem.reopen());
        try (HtodStore s = TestStores.small(dev).durability(Durability.SYNC).open()) {
            HtodMap<String, String> m = s.map("io", Codec.string(), Codec.string());
            CountingDevice d = dev;
            IoCounts put = cost(d, () -> m.put("b", "1"));
            assertEquals(2, put.syncs(), "with SYNC a put also syncs its link " + put);
            m.get("b");
            IoCounts cached = cost(d, () -> m.get("b"));
            assertEquals(1, cached.reads(), "with the entry cached, a get reads the slot only " + cached);
        }
    }
}
