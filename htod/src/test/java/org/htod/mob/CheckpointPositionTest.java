package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A checkpoint at durability NONE (or ASYNC, between its syncs) while the log holds records not
 * yet synced, then two crashes: the first recovery finds the log's end below the checkpoint's
 * position and goes on from there; the installs the recovered store writes lie below that
 * position too. Were the superblock to name the checkpoint's position with the log not durable
 * up to it, the second recovery would skip those installs (it redoes the install records from
 * the checkpoint's position on) and find links on disk into blocks its heap holds free. The
 * checkpoint makes the log durable up to its position first.
 */
class CheckpointPositionTest {
    private static Htod.Builder builder(BlockDevice dev) {
        return Htod.builder(dev).grain(64).logSize(1 << 20).durability(Durability.NONE);
    }

    @Test
    void aCheckpointNeverNamesALogPositionBeyondTheDurableLog() {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        HtodStore s = builder(dev).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        Map<String, String> expected = new TreeMap<>();
        for (int i = 0; i < 100; i++) {
            m.put("a" + i, "v" + i);
            expected.put("a" + i, "v" + i + "@1");
        }
        s.checkpoint();
        for (int i = 0; i < 100; i++) {
            m.put("b" + i, "v" + i); // logged, not synced
            expected.put("b" + i, "v" + i + "@1");
        }
        WriteLayer layer = LogStores.layer(s);
        long end = layer.log.end();
        layer.installs.checkpoint(false);
        assertTrue(layer.log.durable() >= end, "the checkpoint names position " + end + "; the log is durable up to "
                + layer.log.durable());
        dev.crash(1);
        LogStores.closeQuietly(s);

        CrashDevice dev2 = new CrashDevice(disk.reopen());
        HtodStore s2 = builder(dev2).open();
        HtodMap<String, String> m2 = s2.map("m", Codec.string(), Codec.string());
        for (int i = 0; i < 10; i++) {
            m2.put("c" + i, "v" + i); // a few records: the install below lies before the first checkpoint's position
            expected.put("c" + i, "v" + i + "@1");
        }
        s2.sync();
        WriteLayer layer2 = LogStores.layer(s2);
        while (layer2.installs.installOnce()) {
            // the install records, durable; no checkpoint after them
        }
        dev2.crash(2);
        LogStores.closeQuietly(s2);

        try (HtodStore s3 = builder(disk.reopen()).open()) {
            assertTrue(s3.recoveryReport().logInstallRecords() > 0, "the second recovery redoes the installs: "
                    + s3.recoveryReport());
            LogStores.verify(s3);
            assertEquals(expected, LogStores.content(s3).get("m"));
        }
    }
}
