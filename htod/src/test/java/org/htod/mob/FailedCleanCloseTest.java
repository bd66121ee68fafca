package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.container.Container;
import org.htod.core.container.Superblock;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A close whose last checkpoint wrote the clean superblock to one slot and failed at the other
 * (a write error, not a full disk's): the close throws and the store stays open, while a reopen
 * may find the clean superblock, which has it read none of the log. The store wrote its log past
 * the checkpoint all the same: a crash then lost every change acknowledged since, and the reopen
 * wrote the log again from the checkpoint in the epoch after the clean superblock's, which the
 * frames a heal wrote after the failed close may carry too, so that a write of the new log torn by
 * power loss left the two side by side, taken for frames written whole: the store was refused as
 * damaged. Now no record is logged after such a close before a superblock saying not clean has
 * been written in its place.
 */
class FailedCleanCloseTest {
    private static final int SECTOR = 512;
    /** Stream bytes a frame of the log holds (see docs/FORMAT.md). */
    private static final int FRAME_PAYLOAD = 488;
    private static final long LOG = 1 << 20;

    /**
     * While {@link #failing}: every write to the superblock's second slot fails, and every write to
     * its first slot but the first: the close's clean superblock lands in the first slot, and
     * nothing after it reaches either.
     */
    private static final class SuperblockFails extends ForwardingDevice {
        volatile boolean failing;
        volatile int slotAWrites;
        volatile int failed;

        SuperblockFails(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            if (failing && (pos == Superblock.SLOT_B_OFFSET || pos == Superblock.SLOT_A_OFFSET && slotAWrites++ > 0)) {
                failed++;
                throw new HtodIOException("write at offset " + pos + " on " + inner.name(),
                        new IOException("injected I/O error"));
            }
            inner.write(pos, src);
        }
    }

    private static boolean cleanOnDisk(MemoryDevice disk) {
        try (Container c = Container.open(disk.reopen())) {
            return c.superblock().clean();
        }
    }

    @Test
    void aChangeAcknowledgedAfterAFailedCleanCloseSurvivesACrash() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk, SECTOR);
        SuperblockFails dev = new SuperblockFails(crash);
        HtodStore s = Htod.builder(dev).grain(64).logSize(LOG).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        m.put("a", "1");

        dev.failing = true;
        assertThrows(HtodException.class, s::close, "the last checkpoint's superblock could not be written whole");
        assertTrue(dev.failed > 0);
        assertTrue(cleanOnDisk(disk), "a copy of the clean superblock landed");
        dev.failing = false;

        m.put("b", "2"); // acknowledged at SYNC: durable
        assertEquals("2", m.get("b"));
        crash.crashKeeping(at -> false); // power lost: nothing unsynced reaches the disk
        LogStores.closeQuietly(s);

        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals("1", r.get("a"));
            assertEquals("2", r.get("b"), "the change acknowledged after the failed close: " + again.recoveryReport());
            LogStores.verify(again);
        }
    }

    @Test
    void aTornWriteAfterAFailedCleanCloseAndAHealIsATornTail() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk, SECTOR);
        FaultyDevice faults = new FaultyDevice(crash);
        SuperblockFails dev = new SuperblockFails(faults);
        HtodStore s = Htod.builder(dev).grain(64).logSize(LOG).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        m.put("a", "1");

        dev.failing = true;
        assertThrows(HtodException.class, s::close);
        assertTrue(cleanOnDisk(disk), "a copy of the clean superblock landed");
        dev.failing = false;
        WriteLayer layer = LogStores.layer(s);
        long cp = layer.log.end(); // where the clean superblock says the log ends
        long lap = layer.log.regionSize();

        m.put("j", "1");
        // A failed sync drops k1's record; the next put heals the log in a new epoch, and its
        // record reaches into the frame after the one holding the checkpoint's position.
        faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(HtodException.class, () -> m.put("k1", "x".repeat(300)));
        m.put("k2", "y".repeat(600));
        long next = cp - cp % FRAME_PAYLOAD + FRAME_PAYLOAD;
        assertTrue(layer.log.end() > next + 32, "k2's record reaches into the next frame");
        crash.crashKeeping(at -> false);
        LogStores.closeQuietly(s);

        // Reopened; a put whose record spans the frame holding the end and the next (shorter than
        // k2's, so that it ends within what k2 left in the next frame), its write cut by power
        // loss keeping the first frame only: a torn tail, whatever the next frame held.
        CrashDevice crash2 = new CrashDevice(disk.reopen(), SECTOR);
        HtodStore s2 = Htod.builder(crash2).durability(Durability.NONE).open();
        WriteLayer layer2 = LogStores.layer(s2);
        layer2.stopFlusherThread();
        HtodMap<String, String> m2 = s2.map("m", Codec.string(), Codec.string());
        long end2 = layer2.log.end();
        long first = LogStores.frameOffset(end2, lap);
        m2.put("k3", "z".repeat(500));
        crash2.armPowerCut(1, CrashDevice.Counting.WRITES, CrashDevice.CutWrite.IN_FLIGHT);
        assertThrows(HtodException.class, s2::sync);
        crash2.crashKeeping(at -> at == first || !LogStores.inLog(at, LOG));
        LogStores.closeQuietly(s2);

        try (HtodStore s3 = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> m3 = s3.map("m", Codec.string(), Codec.string());
            assertEquals("1", m3.get("a"));
            assertEquals("1", m3.get("j"), "j was acknowledged");
            assertEquals(null, m3.get("k1"), "k1's put failed");
            assertEquals("y".repeat(600), m3.get("k2"), "k2 was acknowledged");
            assertEquals(null, m3.get("k3"), "k3's record is torn");
            LogStores.verify(s3);
        }
    }
}
