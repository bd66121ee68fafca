package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.table.HashtableOnDisk;
import org.junit.jupiter.api.Test;

/**
 * A link the log's replay redoes into the first slot of a bucket segment (offset 0 of its
 * payload, where an entry has its {@code next}) was taken for an entry's {@code next}: written to
 * the disk, but not to the copy of the segment held in memory, which the open had loaded while
 * the link waited. After the open, lookups in that bucket read the copy and missed its chain: a
 * map whose name lies in the catalog's bucket 0, created since the last checkpoint, was gone
 * after a crash ("table '(catalog)': expected as many entries as the table's size, 1 ..., found
 * 0 entries").
 */
class RecoveredFirstSlotTest {
    private static Htod.Builder builder(BlockDevice dev) {
        return Htod.builder(dev).grain(64).logSize(1 << 20).durability(Durability.SYNC);
    }

    @Test
    void aMapInTheCatalogsFirstBucketSurvivesTheReplay() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        HtodStore s = builder(dev).open();
        String name = null;
        try {
            WriteLayer layer = LogStores.layer(s);
            layer.stopFlusherThread();
            HashtableOnDisk catalog = layer.tables().all().get(0); // 64 buckets: one segment
            for (int i = 0; name == null; i++) {
                if ((catalog.hash(("map" + i).getBytes(StandardCharsets.UTF_8)) & 63) == 0) {
                    name = "map" + i;
                }
            }
            // Its catalog entry goes into bucket 0's slot: the install record is durable when the
            // call returns, the slot's write in place is not.
            s.map(name, Codec.string(), Codec.string()).put("k", "v");
            dev.crashKeeping(at -> false); // power lost: every write since the last sync with it
        } finally {
            LogStores.closeQuietly(s);
        }
        try (HtodStore again = builder(disk.reopen()).open()) {
            assertTrue(again.mapNames().contains(name), name + " among " + again.mapNames());
            assertEquals("v", again.map(name, Codec.string(), Codec.string()).get("k"));
            LogStores.verify(again);
        }
    }
}
