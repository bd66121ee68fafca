package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.junit.jupiter.api.Test;

/**
 * Properties of the power-loss simulation that every crash test above it relies on, over many
 * seeds: synced data survives; each unsynced write survives whole or not at all, except at most
 * one torn write made of whole tear units of old and new data; nothing else changes; the same seed
 * gives the same platter; an armed power cut falls where it was armed, on a write or a sync, and
 * leaves the call at the cut in the state the class comment promises.
 */
class CrashDeviceTest {
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);
    private static final int SPAN = 64 * 1024;
    private static final int SECTOR = 512;

    private record Write(int pos, byte[] data) {}

    private static byte[] platter(MemoryDevice m) {
        byte[] all = new byte[SPAN];
        m.read(0, ByteBuffer.wrap(all));
        return all;
    }

    /**
     * Two synced rounds of random writes (bytes 1..99), then unsynced writes, each in a slot of
     * its own and filled with its own byte (100 + index), so that what survived of each can be
     * read off the platter. Returns {the synced image, the platter after the crash}.
     */
    private static byte[][] scenario(long seed, List<Write> pending) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice m = new MemoryDevice(1 << 20, SECTOR);
        CrashDevice d = new CrashDevice(m);
        d.write(0, ByteBuffer.wrap(new byte[SPAN]));
        for (int round = 0; round < 2; round++) {
            for (int i = 0, n = 1 + r.nextInt(12); i < n; i++) {
                byte[] data = new byte[1 + r.nextInt(4000)];
                for (int k = 0; k < data.length; k++) {
                    data[k] = (byte) (1 + r.nextInt(99));
                }
                d.write(r.nextInt(SPAN - 5000), ByteBuffer.wrap(data));
            }
            d.sync();
        }
        byte[] synced = platter(m);
        int slots = 12;
        int slot = SPAN / slots;
        for (int i = 0, n = 1 + r.nextInt(slots); i < n; i++) {
            int len = 1 + r.nextInt(slot - 1);
            int pos = i * slot + r.nextInt(slot - len);
            byte[] data = new byte[len];
            Arrays.fill(data, (byte) (100 + i));
            d.write(pos, ByteBuffer.wrap(data));
            pending.add(new Write(pos, data));
        }
        d.crash(seed);
        assertThrows(StoreClosedException.class, d::size, "a crashed device is closed");
        return new byte[][] {synced, platter(m)};
    }

    @Test
    void unsyncedWritesSurviveWholeOrNotAtAllButOneTornAlongSectors() {
        long base = System.nanoTime();
        for (int i = 0; i < 200 * SCALE; i++) {
            long seed = base + i;
            List<Write> pending = new ArrayList<>();
            byte[][] result = scenario(seed, pending);
            byte[] synced = result[0];
            byte[] after = result[1];
            int torn = 0;
            boolean[] covered = new boolean[SPAN];
            for (Write w : pending) {
                byte mark = w.data[0];
                int kept = 0;
                for (int k = w.pos; k < w.pos + w.data.length; k++) {
                    covered[k] = true;
                    if (after[k] == mark) {
                        kept++;
                    } else {
                        assertEquals(synced[k], after[k], "byte " + k + " is neither old nor new, seed=" + seed);
                    }
                }
                if (kept > 0 && kept < w.data.length) {
                    torn++;
                    for (int s = w.pos / SECTOR; s <= (w.pos + w.data.length - 1) / SECTOR; s++) {
                        int from = Math.max(w.pos, s * SECTOR);
                        int to = Math.min(w.pos + w.data.length, (s + 1) * SECTOR);
                        boolean sectorKept = after[from] == mark;
                        for (int k = from; k < to; k++) {
                            assertEquals(sectorKept, after[k] == mark, "sector " + s + " half torn, seed=" + seed);
                        }
                    }
                }
            }
            assertTrue(torn <= 1, torn + " writes partly applied, at most one may be torn, seed=" + seed);
            for (int k = 0; k < SPAN; k++) {
                if (!covered[k]) {
                    assertEquals(synced[k], after[k], "byte " + k + " outside every pending write changed, seed=" + seed);
                }
            }
        }
    }

    @Test
    void theSameSeedGivesTheSamePlatter() {
        long base = System.nanoTime();
        for (int i = 0; i < 100 * SCALE; i++) {
            long seed = base + i;
            byte[][] a = scenario(seed, new ArrayList<>());
            byte[][] b = scenario(seed, new ArrayList<>());
            assertArrayEquals(a[1], b[1], "replay of seed=" + seed);
        }
    }

    @Test
    void anArmedCrashStopsTheNthWriteAndEverythingAfter() {
        CrashDevice d = new CrashDevice(new MemoryDevice());
        d.armCrashAfterWrites(3);
        d.write(0, ByteBuffer.allocate(10));
        d.write(10, ByteBuffer.allocate(10));
        assertThrows(SimulatedCrashException.class, () -> d.write(20, ByteBuffer.allocate(10)));
        assertThrows(SimulatedCrashException.class, () -> d.write(30, ByteBuffer.allocate(10)));
        assertThrows(SimulatedCrashException.class, d::sync);
        assertEquals(2, d.pendingWrites());
        CrashDevice.CrashReport report = d.crash(1);
        assertEquals(2, report.pending());
        int tornWrites = report.tornSectorsKept() + report.tornSectorsDropped() > 0 ? 1 : 0;
        assertEquals(report.pending(), report.kept() + report.dropped() + tornWrites, "every pending write decided: " + report);
    }

    private static ByteBuffer filled(int length, int value) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) value);
        return ByteBuffer.wrap(b);
    }

    private static byte[] bytes(BlockDevice dev, long pos, int length) {
        byte[] b = new byte[length];
        dev.read(pos, ByteBuffer.wrap(b));
        return b;
    }

    @Test
    void pendingWritesAreVisibleAndSyncedOnesSurvive() {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        dev.write(0, filled(1024, 1));
        dev.sync();
        dev.write(512, filled(1024, 2));
        assertEquals(1536, dev.size());
        assertEquals(1024, disk.size(), "the platter has not seen the pending write");
        assertArrayEquals(new byte[] {2, 2, 2, 2}, bytes(dev, 512, 4));
        assertArrayEquals(new byte[] {1, 1, 1, 1}, bytes(dev, 0, 4));
        assertEquals(1, dev.pendingWrites());
        dev.crash(1);
        for (byte b : bytes(disk, 0, 512)) {
            assertEquals(1, b, "the synced sector before the pending write survives whatever happens");
        }
    }

    @Test
    void aForcedTearKeepsEachTearUnitWholeOrNotAtAll() {
        for (int unit : new int[] {512, 16}) {
            boolean sawTorn = false;
            for (long seed = 0; seed < 100; seed++) {
                MemoryDevice disk = new MemoryDevice(1 << 20, 512);
                CrashDevice dev = new CrashDevice(disk, unit);
                dev.write(8, filled(8 * 512, 7)); // not aligned: the first and last units are partial
                CrashDevice.CrashReport report = dev.crash(seed, true);
                assertEquals(1, report.pending());
                assertEquals(0, report.kept() + report.dropped(), "the one pending write is the torn one");
                byte[] after = disk.size() == 0 ? new byte[0] : bytes(disk, 0, (int) disk.size());
                int kept = 0;
                for (int u = 0; u * unit < after.length; u++) {
                    int from = Math.max(8, u * unit);
                    int to = Math.min(Math.min(8 + 8 * 512, after.length), (u + 1) * unit);
                    for (int k = from; k < to; k++) {
                        assertEquals(after[from], after[k], "seed=" + seed + " unit " + unit + " torn inside at " + k);
                    }
                    kept += from < to && after[from] == 7 ? 1 : 0;
                }
                assertEquals(report.tornSectorsKept(), kept, "seed=" + seed);
                sawTorn |= report.tornSectorsKept() > 0 && report.tornSectorsDropped() > 0;
            }
            assertTrue(sawTorn, "some seed keeps part of the write and drops the rest, unit " + unit);
        }
    }

    /** A chosen crash: exactly the tear units named survive, of each pending write, in write order. */
    @Test
    void aChosenCrashKeepsExactlyTheSectorsNamed() {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        dev.write(0, filled(4 * SECTOR, 1));
        dev.sync();
        dev.write(0, filled(3 * SECTOR, 2)); // sectors 0, 1, 2
        dev.write(SECTOR + 100, filled(SECTOR, 3)); // parts of sectors 1 and 2, after the first
        dev.crashKeeping(at -> at != 2 * SECTOR);
        assertArrayEquals(filled(SECTOR, 2).array(), bytes(disk, 0, SECTOR));
        assertArrayEquals(filled(100, 2).array(), bytes(disk, SECTOR, 100));
        assertArrayEquals(filled(SECTOR - 100, 3).array(), bytes(disk, SECTOR + 100, SECTOR - 100), "the later write wins");
        assertArrayEquals(filled(2 * SECTOR, 1).array(), bytes(disk, 2 * SECTOR, 2 * SECTOR), "sector 2 kept nothing new");
        assertThrows(StoreClosedException.class, dev::size, "a crashed device is closed");
    }

    @Test
    void crashOutcomesVaryWithTheSeed() {
        boolean sawKept = false;
        boolean sawDropped = false;
        for (long seed = 0; seed < 100; seed++) {
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk);
            dev.write(0, filled(512, 3));
            dev.crash(seed);
            sawDropped |= disk.size() == 0;
            sawKept |= disk.size() == 512;
        }
        assertTrue(sawKept && sawDropped);
    }

    @Test
    void aWriteInFlightAtTheCutMayLandOrNot() {
        boolean sawLanded = false;
        boolean sawLost = false;
        for (long seed = 0; seed < 100; seed++) {
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk);
            dev.armPowerCut(2, Counting.WRITES, CutWrite.IN_FLIGHT);
            dev.write(0, filled(10, 1));
            assertThrows(SimulatedCrashException.class, () -> dev.write(10, filled(10, 2)));
            assertTrue(dev.powerCut());
            assertFalse(dev.cutAtSync());
            assertEquals(2, dev.writeCount());
            assertEquals(2, dev.pendingWrites(), "the failing write is in flight, not lost for sure");
            assertThrows(SimulatedCrashException.class, dev::sync);
            assertThrows(SimulatedCrashException.class, () -> dev.write(20, filled(1, 1)));
            assertEquals(2, dev.writeCount(), "nothing is issued after the cut");
            assertArrayEquals(new byte[] {1, 2}, bytes(dev, 9, 2), "reads see what was written until the crash");
            dev.crash(seed);
            boolean landed = disk.size() == 20 && bytes(disk, 10, 1)[0] == 2;
            sawLanded |= landed;
            sawLost |= !landed;
        }
        assertTrue(sawLanded && sawLost);
    }

    @Test
    void aLostWriteAtTheCutNeverLands() {
        for (long seed = 0; seed < 50; seed++) {
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk);
            dev.write(0, filled(10, 1));
            dev.sync();
            dev.armPowerCut(1, Counting.WRITES, CutWrite.LOST);
            assertThrows(SimulatedCrashException.class, () -> dev.write(0, filled(10, 2)));
            assertEquals(0, dev.pendingWrites());
            dev.crash(seed);
            assertArrayEquals(bytes(disk, 0, 10), filled(10, 1).array(), "seed=" + seed);
        }
    }

    @Test
    void aCutAtASyncLeavesItsWritesPending() {
        boolean sawKept = false;
        boolean sawDropped = false;
        for (long seed = 0; seed < 100; seed++) {
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk);
            dev.armPowerCut(4, Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
            dev.write(0, filled(512, 1));
            dev.sync(); // the second counted call; the write below is the third, the sync the fourth
            dev.write(512, filled(512, 2));
            assertThrows(SimulatedCrashException.class, dev::sync);
            assertTrue(dev.cutAtSync());
            assertEquals(1, dev.pendingWrites(), "the sync at the cut did not happen");
            assertEquals(512, disk.size());
            dev.crash(seed);
            assertArrayEquals(filled(512, 1).array(), bytes(disk, 0, 512), "the first sync happened, seed=" + seed);
            sawKept |= disk.size() == 1024;
            sawDropped |= disk.size() == 512;
        }
        assertTrue(sawKept && sawDropped, "the crash keeps any subset of what the cut sync was to make durable");
    }

    @Test
    void syncsDoNotCountUnlessAsked() {
        CrashDevice dev = new CrashDevice(new MemoryDevice());
        dev.armPowerCut(2, Counting.WRITES, CutWrite.LOST);
        dev.write(0, filled(1, 1));
        dev.sync();
        dev.sync();
        assertThrows(SimulatedCrashException.class, () -> dev.write(1, filled(1, 1)));
        assertFalse(dev.cutAtSync());
    }

    @Test
    void writesBeyondCapacityAreRefusedAndNotCounted() {
        CrashDevice dev = new CrashDevice(new MemoryDevice(1024, 512));
        dev.armCrashAfterWrites(1);
        assertThrows(StoreFullException.class, () -> dev.write(1000, filled(100, 1)));
        assertEquals(0, dev.writeCount());
        assertFalse(dev.powerCut(), "a refused write is no I/O, and does not reach the cut");
    }

    /**
     * A durable write lands at once and alone: it survives every crash, whatever is pending; the
     * writes pending before it stay pending (some seed drops each), less what it overwrote, which
     * can no longer land over it.
     */
    @Test
    void aDurableWriteSurvivesAloneAndEarlierPendingWritesStayPending() {
        boolean earlierDropped = false;
        boolean earlierKept = false;
        for (long seed = 0; seed < 200L * SCALE; seed++) {
            MemoryDevice m = new MemoryDevice(1 << 20, SECTOR);
            CrashDevice d = new CrashDevice(m);
            d.write(0, ByteBuffer.wrap(new byte[4096]));
            d.sync();
            byte[] a = new byte[1024];
            Arrays.fill(a, (byte) 1);
            d.write(0, ByteBuffer.wrap(a)); // pending, partly overwritten below
            byte[] c = new byte[512];
            Arrays.fill(c, (byte) 3);
            d.write(2048, ByteBuffer.wrap(c)); // pending, untouched
            byte[] b = new byte[1024];
            Arrays.fill(b, (byte) 2);
            d.writeDurable(512, ByteBuffer.wrap(b));
            assertEquals(2, d.pendingWrites(), "the durable write is not pending; the earlier ones are");
            d.crash(seed);
            byte[] p = new byte[4096];
            m.read(0, ByteBuffer.wrap(p));
            for (int i = 512; i < 1536; i++) {
                assertEquals(2, p[i], "seed " + seed + ": byte " + i + " of the durable write");
            }
            for (int i = 0; i < 512; i++) {
                assertTrue(p[i] == 0 || p[i] == 1, "seed " + seed + ": byte " + i + " is old or the earlier write's");
            }
            earlierDropped |= p[2048] == 0;
            earlierKept |= p[2048] == 3;
        }
        assertTrue(earlierDropped && earlierKept, "a durable write made an earlier, unrelated write durable, or none ever landed");
    }

    @Test
    void aPowerCutAtTheSyncOfADurableWriteLeavesItPending() {
        MemoryDevice m = new MemoryDevice(1 << 20, SECTOR);
        CrashDevice d = new CrashDevice(m);
        d.armPowerCut(2, CrashDevice.Counting.WRITES_AND_SYNCS, CrashDevice.CutWrite.LOST);
        assertThrows(SimulatedCrashException.class, () -> d.writeDurable(0, ByteBuffer.wrap(new byte[] {5})));
        assertTrue(d.cutAtSync(), "the cut fell on the sync half");
        assertEquals(1, d.pendingWrites(), "the write stays pending, for the crash to decide");
    }
}
