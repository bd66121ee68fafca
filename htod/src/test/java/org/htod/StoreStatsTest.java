package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import java.time.Duration;
import java.util.Map;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The stats snapshot counts what the maps did and what it cost, and Jackson writes it. */
@ExtendWith(VerifyStores.class)
class StoreStatsTest {

    @Test
    void countsOperationsAndDeviceIoInLogMode(OpenedStores stores) {
        MemoryDevice mem = new MemoryDevice();
        CountingDevice counting = new CountingDevice(mem);
        HtodStore s = stores.track(TestStores.small(counting).durability(Durability.SYNC).open(), mem);
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        HtodMap<String, String> other = s.map("other", Codec.string(), Codec.string());
        StoreStats before = s.stats();
        IoCounts io0 = counting.counts();
        for (int i = 0; i < 50; i++) {
            m.put("k" + i, "v" + i);
        }
        other.put("x", "y");
        m.putAll(Map.of("a", "1", "b", "2"));
        m.get("k1");
        m.get("absent");
        m.containsKey("k2");
        m.remove("k3");
        m.putIfAbsent("k4", "no"); // present: nothing to do
        StoreStats after = s.stats();
        IoCounts io = counting.counts().minus(io0);

        assertEquals(53, after.operations().puts() - before.operations().puts(), "puts " + after.operations());
        assertEquals(3, after.operations().gets() - before.operations().gets());
        assertEquals(1, after.operations().removes() - before.operations().removes());
        assertEquals(1, after.operations().unchanged() - before.operations().unchanged());
        assertEquals(Map.of("m", 51L, "other", 1L), after.entries());
        assertEquals(52, after.totalEntries());
        // The store's own counts of its device agree with a counting device under it, call for call.
        assertEquals(io.writes(), after.device().writes() - before.device().writes());
        assertEquals(io.syncs(), after.device().syncs() - before.device().syncs());
        assertEquals(io.bytesWritten(), after.device().bytesWritten() - before.device().bytesWritten());
        StoreStats.WriteLayerFigures wl = after.writeLayer();
        assertNotNull(wl, "log mode has write-layer figures");
        assertTrue(wl.groupCommits() - before.writeLayer().groupCommits() >= 1);
        assertTrue(wl.recordsCommitted() - before.writeLayer().recordsCommitted() >= 53, "records " + wl);
        assertTrue(wl.changesBuffered() >= 53, "buffered " + wl);
        assertEquals("TS", after.layout().storageMethod());
        assertTrue(after.layout().logged());
        assertTrue(after.space().fileBytes() > 0 && after.space().allocatedBlocks() > 0, "space " + after.space());
        assertTrue(after.fragmentation().total() >= 1.0, "fragmentation " + after.fragmentation());
        assertTrue(after.lastRecovery().clean(), "a new store opens clean");
    }

    /**
     * The flusher's time at work: some once it has installed (a buffer of 64 KiB fills past its
     * high-water mark, so the flusher, not a caller, installs), and never more than the time the
     * store has been open.
     */
    @Test
    void countsTheFlushersTimeAtWork(OpenedStores stores) throws InterruptedException {
        long opened = System.nanoTime();
        HtodStore s = stores.open(new MemoryDevice(), b -> TestStores.small(b).bufferSize(64 << 10)
                .durability(Durability.NONE));
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        StoreStats.WriteLayerFigures first = s.stats().writeLayer();
        assertEquals(0, first.installs(), "nothing installed yet: " + first);
        for (int i = 0; i < 2000; i++) {
            m.put("k" + i, "v".repeat(100));
        }
        StoreStats.WriteLayerFigures wl = s.stats().writeLayer();
        for (int waited = 0; wl.installs() == 0 && waited < 600; waited++) {
            Thread.sleep(50);
            wl = s.stats().writeLayer();
        }
        double open = (System.nanoTime() - opened) / 1e9;
        assertTrue(wl.installs() > 0, "the flusher installed the full buffer: " + wl);
        assertTrue(wl.flusherBusySeconds() > 0, "its time at work counted: " + wl);
        assertTrue(wl.flusherBusySeconds() <= open, wl.flusherBusySeconds() + " s at work in " + open + " s open");
    }

    /**
     * Installation reads: an install of 1,000 replacements walks each key's chain, and the figures
     * say how many of the entries it loaded came from the device and how many the entry cache
     * served (in log mode a writer's own read of the key, for its version, brings the entry in).
     */
    @Test
    void countsTheInstallationReadsTheEntryCacheAvoided(OpenedStores stores) {
        long[][] got = new long[2][];
        long[] caches = {0, 8 << 20};
        for (int c = 0; c < 2; c++) {
            long cache = caches[c];
            HtodStore s = stores.open(new MemoryDevice(), b -> TestStores.small(b).logSize(4 << 20).cacheSize(cache));
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 1000; i++) {
                m.put("k" + i, "v" + i);
            }
            s.checkpoint();
            StoreStats.WriteLayerFigures before = s.stats().writeLayer();
            for (int i = 0; i < 1000; i++) {
                m.put("k" + i, "w" + i);
            }
            s.checkpoint();
            StoreStats.WriteLayerFigures after = s.stats().writeLayer();
            got[c] = new long[] {after.installReads() - before.installReads(),
                    after.installReadsCached() - before.installReadsCached()};
        }
        String report = "install reads {device, cache}: no cache " + java.util.Arrays.toString(got[0]) + ", 8 MiB "
                + java.util.Arrays.toString(got[1]);
        System.out.println("StoreStatsTest: " + report);
        assertTrue(got[0][0] >= 1000, "each replaced key's own entry read, from the device: " + report);
        assertEquals(0, got[0][1], "no cache, no reads from it: " + report);
        assertTrue(got[1][1] >= 1000, "with a cache, the writers brought every entry in: " + report);
        assertEquals(0, got[1][0], "so the installs read nothing from the device: " + report);
    }

    @Test
    void directModeHasNoWriteLayerAndCountsCacheHits(OpenedStores stores) {
        MemoryDevice mem = new MemoryDevice();
        HtodStore s = stores.open(mem, b -> TestStores.small(b).directMode(true).durability(Durability.NONE));
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        m.put("a", "1");
        s.sync();
        StoreStats before = s.stats();
        for (int i = 0; i < 10; i++) {
            m.get("a");
        }
        StoreStats after = s.stats();
        assertNull(after.writeLayer());
        assertEquals(10, after.operations().gets() - before.operations().gets());
        long lookups = after.cache().hits() + after.cache().misses() - before.cache().hits() - before.cache().misses();
        assertTrue(lookups >= 10, "each get looks its entry up in the cache: " + after.cache());
        assertTrue(after.cache().hits() - before.cache().hits() >= 9, "repeated gets hit: " + after.cache());
    }

    @Test
    void jacksonWritesIt(OpenedStores stores) throws Exception {
        HtodStore s = stores.open(new MemoryDevice(), TestStores::small);
        s.map("m", Codec.string(), Codec.string()).put("a", "1");
        ObjectMapper json = new ObjectMapper()
                .registerModule(new SimpleModule().addSerializer(Duration.class, ToStringSerializer.instance));
        JsonNode tree = json.readTree(json.writeValueAsString(s.stats()));
        assertEquals(1, tree.path("entries").path("m").asLong());
        assertEquals(1, tree.path("operations").path("puts").asLong());
        assertTrue(tree.path("writeLayer").path("groupCommits").asLong() >= 1, tree.toString());
        assertTrue(tree.path("lastRecovery").path("clean").asBoolean());
        assertEquals("TS", tree.path("layout").path("storageMethod").asText());
    }
}
