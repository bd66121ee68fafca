package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.htod.core.StoreClosedException;
import org.junit.jupiter.api.Test;

/**
 * Properties of the power-loss simulation that every crash test above it relies on, over many
 * seeds: synced data survives; each unsynced write survives whole or not at all, except at most
 * one torn write made of whole sectors of old and new data; nothing else changes; the same seed
 * gives the same platter.
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
}
