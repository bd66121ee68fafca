package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.core.device.CountingDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What each map operation costs in device I/O, counted (direct mode, TS): the paper's "one seek
 * to write the data, one to update the hash index", the index update waiting in memory for a
 * flush that writes many of them after one sync.
 */
@ExtendWith(VerifyStores.class)
class HtodIoCountTest {

    private static IoCounts cost(CountingDevice dev, Runnable op) {
        dev.reset();
        op.run();
        return dev.counts();
    }

    @Test
    void costsPerOperation(OpenedStores stores) {
        MemoryDevice mem = new MemoryDevice();
        CountingDevice dev = new CountingDevice(mem);
        try (HtodStore s = stores.track(TestStores.small(dev).directMode(true).durability(Durability.NONE).cacheSize(0).open(), mem)) {
            HtodMap<String, String> m = s.map("io", Codec.string(), Codec.string());
            m.put("warm", "up");
            s.sync();

            IoCounts put = cost(dev, () -> m.put("a", "1"));
            // read the (empty) slot; write the entry; its link waits for a flush
            assertEquals(1, put.reads(), "put of a new key into an empty bucket: reads " + put);
            assertEquals(1, put.writes(), "writes " + put);
            assertEquals(0, put.syncs(), "syncs " + put);

            IoCounts get = cost(dev, () -> m.get("a"));
            assertEquals(1, get.reads(), "get while the slot's link waits: the entry only " + get);
            assertEquals(0, get.writes());

            IoCounts sync = cost(dev, s::sync);
            // the map's header with its count; a sync; the waiting link; a sync
            assertEquals(2, sync.writes(), "sync writes " + sync);
            assertEquals(2, sync.syncs(), "sync syncs " + sync);

            get = cost(dev, () -> m.get("a"));
            assertEquals(2, get.reads(), "get: the slot, then the entry (key and value in its first read) " + get);

            IoCounts miss = cost(dev, () -> m.get("absent")); // its bucket is empty
            assertEquals(1, miss.reads(), "a miss on an empty bucket reads the slot only " + miss);

            IoCounts replace = cost(dev, () -> m.put("a", "2"));
            // slot, entry; new entry. The old entry is freed once its unlinking is durable.
            assertEquals(2, replace.reads(), "replace reads " + replace);
            assertEquals(1, replace.writes(), "replace writes " + replace);
            assertEquals(0, replace.syncs(), "replace syncs " + replace);
            s.sync();

            IoCounts remove = cost(dev, () -> m.remove("a"));
            assertEquals(2, remove.reads(), "remove reads " + remove);
            assertEquals(0, remove.writes(), "remove: its link waits " + remove);
            assertEquals(0, remove.syncs(), "remove syncs " + remove);

            sync = cost(dev, s::sync);
            // header; the link (it names an entry already durable: no sync before it); sync; the
            // free of the removed entry
            assertEquals(3, sync.writes(), "sync writes " + sync);
            assertEquals(1, sync.syncs(), "sync syncs " + sync);

            // Thirty new keys: thirty entry writes, and their links written together, after one sync.
            IoCounts puts = cost(dev, () -> {
                for (int i = 0; i < 30; i++) {
                    m.put("n" + i, "v");
                }
            });
            assertEquals(30, puts.writes(), "30 puts " + puts);
            assertEquals(0, puts.syncs(), "30 puts " + puts);
            sync = cost(dev, s::sync);
            assertEquals(2, sync.syncs(), "one flush for all of them " + sync);
            assertTrue(sync.writes() <= 31, "at most one write per link and the header " + sync);
        }
        dev = new CountingDevice(mem.reopen());
        try (HtodStore s = stores.track(TestStores.small(dev).directMode(true).durability(Durability.SYNC).open(), mem)) {
            HtodMap<String, String> m = s.map("io", Codec.string(), Codec.string());
            CountingDevice d = dev;
            IoCounts put = cost(d, () -> m.put("b", "1"));
            assertEquals(2, put.syncs(), "with SYNC a put syncs its entry, then its link " + put);
            assertEquals(2, put.writes(), "the entry, then its link " + put);
            IoCounts remove = cost(d, () -> m.remove("b"));
            assertEquals(1, remove.syncs(), "a removal links to a durable entry: one sync after the link " + remove);
            m.put("b", "2");
            m.get("b");
            IoCounts cached = cost(d, () -> m.get("b"));
            assertEquals(0, cached.reads(), "with the entry cached, a get reads nothing: its slot is held in memory " + cached);
        }
    }
}
