package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * logs the dropped changes again once the log heals: they go out in one record, or in one relog
 * unit of several when they exceed a record, so that a crash in the write that carries them
 * leaves the batch whole or absent. Logged again one record a key, a write torn after its first
 * sectors kept the first keys of the batch and lost the rest; logged again in several records
 * that replay took one by one, a cut between two of them did the same.
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

    /**
     * A store at NONE with a 128 KiB log over a device that fails on demand and, at a crash, keeps
     * what it is told, in which a batch of ten keys (b0 and b9 changed again after it) and twelve
     * other keys, values of {@code v}'s size, wait in the log's memory: more than one record holds,
     * so that logged again they go out as a relog unit of several parts.
     */
    private static final class Unit {
        final MemoryDevice disk = new MemoryDevice();
        final CrashDevice crash = new CrashDevice(disk);
        final Writes writes = new Writes(crash);
        final FaultyDevice faults = new FaultyDevice(writes);
        final HtodStore s = Htod.builder(faults).grain(64).logSize(128 << 10).placeValuesFrom(0)
                .bufferSize(64 << 20).durability(Durability.NONE).open();
        final HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        /** Bytes of the log the changes take. */
        final long dropped;

        Unit(String v) {
            s.sync();
            long before = LogStores.layer(s).log.end();
            try (WriteBatch b = s.batch()) {
                for (int i = 0; i < 10; i++) {
                    b.put(m, "b" + i, "A" + v);
                }
                b.commit();
            }
            m.put("b0", "B" + v);
            m.put("b9", "B" + v);
            for (int i = 0; i < 12; i++) {
                m.put("o" + i, "O" + v);
            }
            dropped = LogStores.layer(s).log.end() - before;
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

    /**
     * More dropped than one record holds: a batch of ten keys, two of them changed again after it,
     * and twelve other keys, about 28 KB against a largest payload of 15,584 bytes (128 KiB log),
     * logged again as a unit of parts in one write. The power goes in that write, once for each
     * number of its sectors that reach the disk, from none to all: the batch is whole, with the
     * later changes or without, or absent, at every cut; all of it survives the whole write.
     */
    @Test
    void aRelogOfSeveralRecordsIsWholeOrAbsentAfterACrashAtEachSector() {
        String v = "x".repeat(1200);
        int whole = 0;
        int absent = 0;
        int sectors = -1;
        for (int keep = 0; sectors < 0 || keep <= sectors; keep++) {
            Unit u = new Unit(v);
            HtodStore s = u.s;
            HtodMap<String, String> m = u.m;
            assertTrue(u.dropped > LogStores.layer(s).log.maxPayload() + 8000, u.dropped + " bytes to log again, "
                    + "against a largest payload of " + LogStores.layer(s).log.maxPayload());
            u.faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
            assertThrows(HtodException.class, s::sync, "the records are dropped");
            m.put("after", "a"); // heals the log: the dropped changes are logged again
            if (keep == 0) {
                keptFromTheUnitsStart(LogStores.layer(s));
            }
            u.crash.armPowerCut(1, Counting.WRITES, CutWrite.IN_FLIGHT);
            u.writes.seen.clear();
            assertThrows(HtodException.class, s::sync, "the power goes in the write of the changes logged again");
            long[] cut = u.writes.seen.get(u.writes.seen.size() - 1);
            int sectorSize = u.disk.sectorSize();
            if (sectors < 0) {
                sectors = (int) (cut[1] / sectorSize);
                assertTrue(cut[1] > LogStores.layer(s).log.maxPayload() + 8000, "one write of " + cut[1]
                        + " bytes carries the changes logged again");
            }
            long keepBelow = cut[0] + (long) keep * sectorSize;
            u.crash.crashKeeping(at -> at + sectorSize <= keepBelow);
            LogStores.closeQuietly(s);
            try (HtodStore again = Htod.builder(u.disk.reopen()).open()) {
                HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
                int present = 0;
                for (int i = 0; i < 10; i++) {
                    String got = r.get("b" + i);
                    if (got != null) {
                        present++;
                        boolean changedAgain = i == 0 || i == 9;
                        assertTrue(got.equals("A" + v) || changedAgain && got.equals("B" + v),
                                "b" + i + " holds " + got.substring(0, 1) + "... with " + keep + " sectors kept");
                    }
                }
                assertTrue(present == 0 || present == 10, present + " of the batch's 10 keys survive with " + keep
                        + " of the write's " + sectors + " sectors kept");
                if (present == 10) {
                    whole++;
                } else {
                    absent++;
                }
                if (keep == sectors) {
                    assertEquals("B" + v, r.get("b0"), "the whole write kept");
                    assertEquals("O" + v, r.get("o11"), "the whole write kept");
                    assertEquals("a", r.get("after"), "the whole write kept");
                }
                LogStores.verify(again);
            }
        }
        System.out.println("RelogBatchTest: of " + (sectors + 1) + " cuts, " + whole + " kept the batch, " + absent
                + " lost it");
        assertTrue(whole > 0 && absent > 0, "cuts that kept the batch: " + whole + ", that lost it: " + absent);
    }

    /**
     * The write that carries a relog unit of several parts fails while the store runs, after its
     * first bytes reached the disk: none of them, each eighth of the unit (inside its first part,
     * between two parts, inside the last) and all of it. The keys it carried count as durable only
     * once a write that holds the unit's last part is synced, so the next heal logs every one of
     * them again; after a sync and a power cut that keeps nothing else, each key holds its latest
     * value, whatever the failed write left behind it.
     */
    @Test
    void aRelogWhoseWriteFailsBetweenItsPartsIsLoggedAgainWhole() {
        String v = "x".repeat(1200);
        for (int eighths = 0; eighths <= 8; eighths++) {
            Unit u = new Unit(v);
            HtodStore s = u.s;
            HtodMap<String, String> m = u.m;
            assertTrue(u.dropped > LogStores.layer(s).log.maxPayload() + 8000, u.dropped + " bytes to log again");
            u.faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
            assertThrows(HtodException.class, s::sync, "the records are dropped");
            m.put("after", "a"); // heals the log: the dropped changes wait in a unit of parts
            keptFromTheUnitsStart(LogStores.layer(s));
            int landing = (int) (u.dropped * eighths / 8);
            u.faults.failWriteAfter(1, landing);
            u.writes.seen.clear();
            assertThrows(HtodException.class, s::sync, "the write of the unit fails after " + landing + " bytes");
            assertEquals(2, u.faults.faultsRaised(), "the dropping sync and the unit's write failed");
            if (landing > 0) { // all of a write shorter than landing
                long landed = u.writes.seen.get(u.writes.seen.size() - 1)[1];
                assertTrue(landed == landing || eighths == 8 && landed < landing, landed + " bytes of the unit landed");
            }
            u.faults.heal();
            s.sync(); // heals again: every key the unit carried is logged again, and durable
            u.crash.crashKeeping(at -> false);
            LogStores.closeQuietly(s);
            try (HtodStore again = Htod.builder(u.disk.reopen()).open()) {
                HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
                String where = " after the unit's write failed with " + landing + " of about " + u.dropped
                        + " bytes landed";
                for (int i = 0; i < 10; i++) {
                    String want = (i == 0 || i == 9 ? "B" : "A") + v;
                    String got = r.get("b" + i);
                    assertEquals(want.substring(0, 1), got == null ? null : got.substring(0, 1), "b" + i + where);
                }
                for (int i = 0; i < 12; i++) {
                    assertEquals("O" + v, r.get("o" + i), "o" + i + where);
                }
                assertEquals("a", r.get("after"), "after" + where);
                LogStores.verify(again);
            }
        }
    }

    /**
     * Every key logged again in a unit keeps the log from the unit's first part (so that a
     * checkpoint never names a position inside it, where replay would read it in part) and counts
     * as durable only once its last part is (so that a failure between parts has the next heal
     * log all of it again).
     */
    private static void keptFromTheUnitsStart(WriteLayer layer) {
        long tableId = layer.map("m", false).tableId;
        java.util.Set<Long> firsts = new java.util.TreeSet<>();
        java.util.Set<Long> lasts = new java.util.TreeSet<>();
        for (Mob.Pending p : layer.mob.of(tableId)) {
            if (!new String(p.key, java.nio.charset.StandardCharsets.UTF_8).equals("after")) {
                firsts.add(p.firstLsn);
                lasts.add(p.lastLsn);
            }
        }
        assertEquals(1, firsts.size(), "where the keys logged again keep the log from: " + firsts);
        assertEquals(1, lasts.size(), "the record whose durability the keys logged again wait for: " + lasts);
        assertTrue(firsts.iterator().next() < lasts.iterator().next(), "a unit of several parts");
    }
}
