package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The binder's meters register on a registry and move when the store works. */
@ExtendWith(VerifyStores.class)
class HtodMetricsTest {

    @Test
    void metersMoveWithTheStore(OpenedStores stores) {
        HtodStore s = stores.open(new MemoryDevice(), b -> TestStores.small(b).durability(Durability.SYNC));
        HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HtodMetrics(s).bindTo(registry);

        double syncs0 = counter(registry, "htod.device.syncs", null, null);
        double commits0 = counter(registry, "htod.log.group.commits", null, null);
        double changes0 = counter(registry, "htod.buffer.changes", null, null);
        double installed0 = counter(registry, "htod.installed.keys", null, null);
        double checkpoints0 = counter(registry, "htod.checkpoints", null, null);
        for (int i = 0; i < 20; i++) {
            m.put("k" + i, "v".repeat(100));
        }
        for (int i = 0; i < 30; i++) {
            m.get("k" + (i % 20));
        }
        m.remove("k0");

        assertEquals(20, counter(registry, "htod.operations", "op", "put"));
        assertEquals(30, counter(registry, "htod.operations", "op", "get"));
        assertEquals(1, counter(registry, "htod.operations", "op", "remove"));
        Timer puts = registry.find("htod.operation").tag("op", "put").timer();
        assertNotNull(puts);
        assertEquals(20, puts.count(), "every put timed once bound");
        assertEquals(30, registry.find("htod.operation").tag("op", "get").timer().count());
        ValueAtPercentile[] pcts = puts.takeSnapshot().percentileValues();
        assertEquals(3, pcts.length, "p50, p90, p99 published");
        assertTrue(counter(registry, "htod.device.syncs", null, null) - syncs0 >= 20, "a SYNC put syncs");
        assertTrue(counter(registry, "htod.log.group.commits", null, null) - commits0 >= 1);
        assertTrue(counter(registry, "htod.device.bytes", "direction", "write") > 0);
        assertEquals(19, gauge(registry, "htod.entries", "map", "pages"));
        // What the gauges read must outlive a collection (a gauge holds its object weakly unless told).
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        assertEquals(19, gauge(registry, "htod.entries", "map", "pages"), "after a collection");
        assertTrue(gauge(registry, "htod.file.bytes", null, null) > 0);
        assertTrue(gauge(registry, "htod.fragmentation", "kind", "total") >= 1.0);
        assertTrue(gauge(registry, "htod.buffer.bytes", null, null) >= 0);
        assertEquals(1, gauge(registry, "htod.recovery.clean", null, null));
        assertTrue(gauge(registry, "htod.log.group.size", null, null) >= 1, "at least one record a group");

        // The write buffer's figures: 21 changes buffered; after a checkpoint none waits, every key
        // was installed (k0 perhaps only as its removal), and the absorbed never exceed the buffered.
        assertEquals(21, counter(registry, "htod.buffer.changes", null, null) - changes0);
        s.checkpoint();
        assertEquals(0, gauge(registry, "htod.buffer.keys", null, null));
        assertTrue(counter(registry, "htod.installed.keys", null, null) - installed0 >= 19);
        assertTrue(counter(registry, "htod.installs", null, null) >= 1);
        assertTrue(counter(registry, "htod.checkpoints", null, null) - checkpoints0 >= 1);
        assertTrue(counter(registry, "htod.buffer.absorbed", null, null) <= counter(registry, "htod.buffer.changes", null, null));
        // No write waited for the flusher here (BackPressureFiguresTest makes some wait).
        assertEquals(0, registry.find("htod.buffer.waits").functionTimer().count());
        assertEquals(0, registry.find("htod.log.waits").functionTimer().count());
        // The installs' reads of chains, by source, as the store's figures count them
        // (StoreStatsTest makes them count something).
        StoreStats.WriteLayerFigures wl = s.stats().writeLayer();
        assertEquals(wl.installReads(), counter(registry, "htod.install.reads", "source", "device"));
        assertEquals(wl.installReadsCached(), counter(registry, "htod.install.reads", "source", "cache"));
        // The flusher's time at work, never behind what the figures read before it (a counter only rises).
        double busy = counter(registry, "htod.flusher.busy", null, null);
        assertTrue(busy >= wl.flusherBusySeconds() && busy <= s.stats().writeLayer().flusherBusySeconds(),
                busy + " s against " + wl.flusherBusySeconds());
    }

    private static double counter(SimpleMeterRegistry r, String name, String tag, String value) {
        FunctionCounter c = (tag == null ? r.find(name) : r.find(name).tag(tag, value)).functionCounter();
        assertNotNull(c, name + " " + tag + "=" + value);
        return c.count();
    }

    private static double gauge(SimpleMeterRegistry r, String name, String tag, String value) {
        Gauge g = (tag == null ? r.find(name) : r.find(name).tag(tag, value)).gauge();
        assertNotNull(g, name + " " + tag + "=" + value);
        return g.value();
    }

    /**
     * A store's meters leave the registry when it closes, and a store opened again on the same
     * device registers its own: the entries gauge reads its maps. They stayed: the entries gauges
     * held each closed store, all its memory with it, for the registry's life, and the new store's
     * meters were taken for the closed one's (a registry keeps the first of a name and tags),
     * reading NaN.
     */
    @Test
    void aClosedStoresMetersLeaveTheRegistryAndAReopenedOneReadsItsOwn() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MemoryDevice dev = new MemoryDevice();
        try (HtodStore s = TestStores.small(dev).open()) {
            HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
            m.put("a", "1");
            new HtodMetrics(s).bindTo(registry);
            assertEquals(1, gauge(registry, "htod.entries", "map", "pages"));
        }
        assertEquals(0, registry.getMeters().size(), "no meter of the closed store left: " + registry.getMeters());
        try (HtodStore s = TestStores.small(dev.reopen()).open()) {
            HtodMap<String, String> m = s.map("pages", Codec.string(), Codec.string());
            m.put("b", "2");
            new HtodMetrics(s).bindTo(registry);
            assertEquals(2, gauge(registry, "htod.entries", "map", "pages"), "the reopened store's own");
        }
    }

    /**
     * A store opened again on the same file, and bound, before the closed one's meters are
     * removed (the close's tasks run once its file is free): the new store's meters stay, and
     * read its maps. The closed store's removal went by the file's name and took the new store's
     * meters with it; and the new store's binding had been handed the closed one's meters.
     */
    @Test
    void aStoreReopenedBeforeTheClosedOnesMetersGoKeepsItsOwn() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        java.nio.file.Path file = TestStores.tempFile("metrics-reopen");
        HtodStore[] again = new HtodStore[1];
        try {
            HtodStore s = Htod.builder(file).open();
            s.map("pages", Codec.string(), Codec.string()).put("a", "1");
            s.onClose(() -> { // runs before the metrics' own task: the file is free by then
                again[0] = Htod.builder(file).open();
                again[0].map("pages", Codec.string(), Codec.string()).put("b", "2");
                new HtodMetrics(again[0]).bindTo(registry);
            });
            new HtodMetrics(s).bindTo(registry);
            s.close();
            assertNotNull(again[0]);
            assertEquals(2, gauge(registry, "htod.entries", "map", "pages"), "the reopened store's own meters");
        } finally {
            if (again[0] != null) {
                again[0].close();
            }
            TestStores.delete(file);
        }
        assertEquals(0, registry.getMeters().size(), "and they go with it");
    }
}
