package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.WriteBatch;
import org.htod.core.HtodException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A {@link WriteBatch} whose record a failed log write dropped, at NONE, where the write layer
 * logs the dropped changes again once the log heals: they go out in one record, so that a crash
 * in the write that carries them leaves the batch whole or absent. Logged again one record a key,
 * a write torn after its first sectors kept the first keys of the batch and lost the rest.
 */
class RelogBatchTest {
    /** Notes where each write starts and how long it is, the one a power cut stops included. */
    private static final class Writes extends ForwardingDevice {
        final List<long[]> seen = new ArrayList<>();

        Writes(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            seen.add(new long[] {pos, src.remaining()});
            inner.write(pos, src);
        }

        @Override
        public void writeDurable(long pos, ByteBuffer src) {
            seen.add(new long[] {pos, src.remaining()});
            inner.writeDurable(pos, src);
        }
    }

    @Test
    void aBatchLoggedAgainAfterAFailedWriteIsWholeOrAbsentAfterACrash() {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk);
        Writes writes = new Writes(crash);
        FaultyDevice faults = new FaultyDevice(writes);
        HtodStore s = Htod.builder(faults).grain(64).logSize(1 << 20).durability(Durability.NONE).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        s.sync();
        try (WriteBatch b = s.batch()) {
            for (int i = 0; i < 8; i++) {
                b.put(m, "k" + i, "v" + i + "-" + "x".repeat(200));
            }
            b.commit();
        }
        faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(HtodException.class, s::sync, "the batch's record is dropped");
        m.put("after", "a"); // heals the log: the batch is logged again
        crash.armPowerCut(1, Counting.WRITES, CutWrite.IN_FLIGHT);
        writes.seen.clear();
        assertThrows(HtodException.class, s::sync, "the power goes in the write of the batch logged again");
        long[] cut = writes.seen.get(writes.seen.size() - 1);
        long keepBelow = cut[0] + cut[1] / 2; // the first half of the write's sectors lands
        crash.crashKeeping(at -> at + disk.sectorSize() <= keepBelow);
        LogStores.closeQuietly(s);
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            int present = 0;
            for (int i = 0; i < 8; i++) {
                if (r.get("k" + i) != null) {
                    present++;
                }
            }
            assertTrue(present == 0 || present == 8, present + " of the batch's 8 keys survive");
            LogStores.verify(again);
        }
    }
}
