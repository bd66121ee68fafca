package org.htod.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.htod.Htod;
import org.htod.HtodStore;
import org.infinispan.commons.CacheConfigurationException;
import org.infinispan.commons.util.IntSets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A map per segment, created on first write, and a store that refuses another segment layout. */
class SegmentMapsTest {
    @TempDir
    Path dir;

    @Test
    void aSegmentsMapExistsOnlyOnceWrittenAndCountsItsEntries() {
        try (HtodStore store = Htod.builder(dir.resolve("s.htod")).open()) {
            SegmentMaps maps = SegmentMaps.open(store, "s.htod", true, 16);
            assertNull(maps.forRead(3), "no map before the first write to segment 3");
            maps.forWrite(3).put(new byte[] {1}, new byte[] {2});
            maps.forWrite(3).put(new byte[] {2}, new byte[] {2});
            maps.forWrite(5).put(new byte[] {1}, new byte[] {2});
            assertNotNull(maps.forRead(3));
            assertEquals(2, maps.count(IntSets.immutableSet(3)));
            assertEquals(3, maps.count(IntSets.immutableRangeSet(16)));
            assertTrue(store.mapNames().contains("segment-3"));
            assertTrue(store.mapNames().contains("segment-5"));
            assertThrows(IllegalArgumentException.class, () -> maps.forWrite(16));
        }
        try (HtodStore store = Htod.builder(dir.resolve("s.htod")).open()) {
            SegmentMaps maps = SegmentMaps.open(store, "s.htod", true, 16);
            assertEquals(3, maps.count(null), "reopened: the maps that existed are found again");
        }
    }

    @Test
    void anotherSegmentCountIsRefused() {
        try (HtodStore store = Htod.builder(dir.resolve("s.htod")).open()) {
            SegmentMaps.open(store, "s.htod", true, 256);
        }
        try (HtodStore store = Htod.builder(dir.resolve("s.htod")).open()) {
            CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
                    () -> SegmentMaps.open(store, "s.htod", true, 128));
            assertTrue(e.getMessage().contains("segmented, with 256 segments")
                    && e.getMessage().contains("segmented, with 128 segments"), e.getMessage());
            assertThrows(CacheConfigurationException.class, () -> SegmentMaps.open(store, "s.htod", false, 256));
        }
    }

    @Test
    void aNonSegmentedStoreKeepsEverySegmentInOneMap() {
        try (HtodStore store = Htod.builder(dir.resolve("s.htod")).open()) {
            SegmentMaps maps = SegmentMaps.open(store, "s.htod", false, 256);
            maps.forWrite(7).put(new byte[] {1}, new byte[] {2});
            maps.forWrite(-1).put(new byte[] {2}, new byte[] {2}); // any segment number, even an invalid one
            assertEquals(2, maps.forRead(200).longSize());
            assertEquals(2, maps.count(IntSets.immutableSet(0)));
        }
    }
}
