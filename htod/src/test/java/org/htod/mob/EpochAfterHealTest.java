package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * The epoch a reopened store writes its log in lies above every epoch its log's frames carry,
 * those of a heal included. A heal raises the epoch in memory only, and the frames written in it
 * may lie past the end a crash leaves, no record of that epoch being read back. A reopen that took
 * its epoch from the superblock and the records read wrote the same positions in the same epoch
 * again; a later write torn by power loss then left the new frames beside the old ones, both of
 * one epoch, which the reader took for frames written whole: a record mixing the two failed its
 * CRC, and the store was refused as damaged after a crash in a write that was never acknowledged
 * (or, where the old records lined up, replayed records the first crash had cut off).
 */
class EpochAfterHealTest {
    private static final int SECTOR = 512;
    private static final long LOG = 1 << 20;

    @Test
    void aReopenAfterACrashFollowingAHealWritesInANewEpoch() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk, SECTOR);
        FaultyDevice faults = new FaultyDevice(crash);
        HtodStore s = Htod.builder(faults).grain(64).logSize(LOG).durability(Durability.NONE).open();
        WriteLayer layer = LogStores.layer(s);
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        m.put("a", "1");
        s.sync();
        layer.stopFlusherThread(); // nothing but the writes below touches the log
        long epochBefore = layer.log.epoch();

        // A failed sync drops k1's record; the next put heals the log, in a new epoch, and logs k1
        // again; the write of those records is cut by power loss, keeping all but its first frame.
        faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        m.put("k1", "x".repeat(300));
        assertThrows(HtodException.class, s::sync);
        long frame = LogStores.frameOffset(layer.log.durable(), layer.log.regionSize()); // holds where the dropped records began
        m.put("k2", "y".repeat(300));
        assertEquals(epochBefore + 1, layer.log.epoch(), "healed in a new epoch");
        crash.armPowerCut(1, CrashDevice.Counting.WRITES, CrashDevice.CutWrite.IN_FLIGHT);
        assertThrows(HtodException.class, s::sync);
        crash.crashKeeping(at -> at != frame);
        LogStores.closeQuietly(s);

        // Reopened, a put whose record spans the first two frames after the end; the write of it
        // is cut by power loss, keeping its first frame only: a torn tail.
        CrashDevice crash2 = new CrashDevice(disk.reopen(), SECTOR);
        HtodStore s2 = Htod.builder(crash2).durability(Durability.NONE).open();
        WriteLayer layer2 = LogStores.layer(s2);
        layer2.stopFlusherThread();
        HtodMap<String, String> m2 = s2.map("m", Codec.string(), Codec.string());
        assertEquals("1", m2.get("a"));
        m2.put("k3", "z".repeat(650));
        crash2.armPowerCut(1, CrashDevice.Counting.WRITES, CrashDevice.CutWrite.IN_FLIGHT);
        assertThrows(HtodException.class, s2::sync);
        crash2.crashKeeping(at -> at == frame || !LogStores.inLog(at, LOG));
        LogStores.closeQuietly(s2);

        try (HtodStore s3 = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> m3 = s3.map("m", Codec.string(), Codec.string());
            assertEquals("1", m3.get("a"));
            assertEquals(null, m3.get("k1"), "k1 was never durable");
            assertEquals(null, m3.get("k2"), "k2 was never durable");
            assertEquals(null, m3.get("k3"), "k3's record is torn");
            LogStores.verify(s3);
        }
    }
}
