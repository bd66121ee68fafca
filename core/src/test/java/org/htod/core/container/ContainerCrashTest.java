package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.Random;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.NotAStoreException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.junit.jupiter.api.Test;

/**
 * Power loss at every device write of a run of superblock updates: the store must always open,
 * at the last update that returned or the one in flight, never older and never with an error.
 * The write at the cut is in flight: the crash keeps it whole, torn or not at all.
 */
class ContainerCrashTest {
    private static final int UPDATES = 50;
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);
    private static final int SEEDS_PER_WRITE = 8 * SCALE;
    private static final ContainerConfig CFG = ContainerConfig.builder().logSize(4096).build();

    private static long baseSeed() {
        return Long.getLong("htod.test.seed", new Random().nextLong());
    }

    /** Power fails at the {@code n}-th write from now; that write may land whole, torn or not at all. */
    private static void cutAtWrite(CrashDevice dev, long n) {
        dev.armPowerCut(n, Counting.WRITES, CutWrite.IN_FLIGHT);
    }

    /** rootCatalog written by update {@code i} (1-based); 0 before any update. */
    private static long root(Superblock sb, int i) {
        return i == 0 ? 0 : sb.heapOffset() + (long) i * sb.grain();
    }

    @Test
    void crashAtEveryWriteOfAnUpdateRunWithSectorTears() {
        crashAtEveryWrite(512);
    }

    @Test
    void crashAtEveryWriteOfAnUpdateRunWithSubSectorTears() {
        // 16-byte tears break the device contract: a slot can be torn inside its record, which
        // only the CRC can catch. The other copy must carry the store.
        crashAtEveryWrite(16);
    }

    private void crashAtEveryWrite(int tearUnit) {
        long base = baseSeed();
        for (int k = 1; k <= UPDATES + 1; k++) {
            for (int s = 0; s < SEEDS_PER_WRITE; s++) {
                long seed = base + k * 1_000_003L + s;
                runOnce(tearUnit, k, seed);
            }
        }
    }

    /** Creates a store, loses power at write {@code k} after creation, crashes, reopens. */
    private static void runOnce(int tearUnit, int k, long seed) {
        String where = "seed=" + seed + " k=" + k + " tearUnit=" + tearUnit;
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk, tearUnit);
        Container c = Container.create(dev, CFG);
        Superblock created = c.superblock();
        cutAtWrite(dev, k);
        int returned = 0;
        int inFlight = -1;
        for (int i = 1; i <= UPDATES; i++) {
            long value = root(created, i);
            try {
                c.update(sb -> sb.withRootCatalog(value));
                returned = i;
            } catch (SimulatedCrashException e) {
                inFlight = i;
                break;
            }
        }
        assertEquals(Math.min((k - 1) / 2, UPDATES), returned, where + ": two device writes per update, one per slot");
        dev.crash(seed);
        Superblock after;
        try {
            after = Container.open(disk).superblock();
        } catch (HtodException e) {
            throw new AssertionError(where + ": store did not open after the crash", e);
        }
        long root = after.rootCatalog();
        if (root == root(created, returned)) {
            assertEquals(created.sequence() + returned, after.sequence(), where);
        } else if (inFlight > 0 && root == root(created, inFlight)) {
            assertEquals(created.sequence() + inFlight, after.sequence(), where);
        } else {
            fail(where + ": opened rootCatalog " + root + " at sequence " + after.sequence() + ", expected update "
                    + returned + (inFlight > 0 ? " or " + inFlight : ""));
        }
        assertEquals(created.withSequence(after.sequence()).withRootCatalog(root), after,
                where + ": no other field changed");
    }

    @Test
    void updateReturnedMeansDurable() {
        // With no failure, a crash right after the last update keeps it: update syncs before returning.
        long seed = baseSeed();
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        Container c = Container.create(dev, CFG);
        long root = c.superblock().heapOffset();
        c.update(sb -> sb.withRootCatalog(root));
        assertEquals(0, dev.pendingWrites());
        dev.crash(seed);
        assertEquals(root, Container.open(disk).superblock().rootCatalog(), "seed=" + seed);
    }

    @Test
    void tornSlotInsideTheRecordLeavesTheOtherCopy() {
        long base = baseSeed();
        for (int s = 0; s < 64 * SCALE; s++) {
            long seed = base + s;
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk, 16);
            Container c = Container.create(dev, CFG);
            Superblock three = c.update(sb -> sb.withCheckpointStamp(3)); // sequence 2 in both slots
            cutAtWrite(dev, 1); // the first write of the next update: slot A
            assertThrows(SimulatedCrashException.class, () -> c.update(sb -> sb.withCheckpointStamp(4)));
            dev.crash(seed, true);
            Superblock opened = Container.open(disk).superblock();
            ByteBuffer slotA = Slots.read(disk, Slots.A);
            boolean slotAIsNew;
            try {
                slotAIsNew = Superblock.decode(slotA, disk.name(), Slots.A).sequence() == 3;
            } catch (CorruptStoreException e) {
                slotAIsNew = false; // torn inside the record: the CRC caught it
            }
            assertEquals(slotAIsNew ? 3 : 2, opened.sequence(), "seed=" + seed);
            assertEquals(slotAIsNew ? 4 : 3, opened.checkpointStamp(), "seed=" + seed);
            assertEquals(three.storeId(), opened.storeId(), "seed=" + seed);
        }
    }

    @Test
    void handTornSlotIsCaughtByItsCrc() {
        MemoryDevice disk = new MemoryDevice();
        Container c = Container.create(disk, CFG);
        Superblock three = c.update(sb -> sb.withCheckpointStamp(3));
        // Half of the next record (sequence 3, written to slot A first) lands; slot B keeps sequence 2.
        ByteBuffer next = three.withSequence(3).withCheckpointStamp(4).encode();
        disk.write(Slots.A, next.limit(80));
        assertThrows(CorruptStoreException.class,
                () -> Superblock.decode(Slots.read(disk, Slots.A), disk.name(), Slots.A));
        assertEquals(three, Container.open(disk).superblock());

        // A tear at a sector boundary keeps or loses the whole record, which fits in sector 0.
        MemoryDevice other = new MemoryDevice();
        Container d = Container.create(other, CFG);
        Superblock again = d.update(sb -> sb.withCheckpointStamp(3));
        ByteBuffer whole = again.withSequence(3).withCheckpointStamp(4).encode();
        other.write(Slots.A, whole.limit(512));
        assertEquals(4, Container.open(other).superblock().checkpointStamp());
    }

    @Test
    void crashDuringCreateLeavesNoStoreOrTheCreatedOne() {
        long base = baseSeed();
        for (int s = 0; s < 64 * SCALE; s++) {
            long seed = base + s;
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk);
            cutAtWrite(dev, 1);
            assertThrows(SimulatedCrashException.class, () -> Container.create(dev, CFG, 99, 1000));
            dev.crash(seed);
            if (disk.size() == 0) {
                assertThrows(NotAStoreException.class, () -> Container.open(disk), "seed=" + seed);
                continue;
            }
            try {
                Superblock sb = Container.open(disk).superblock();
                assertEquals(99, sb.storeId(), "seed=" + seed);
                assertEquals(1, sb.sequence(), "seed=" + seed);
            } catch (NotAStoreException e) {
                // Neither record's sector landed: there is no store, and create may be run again.
                Container.create(disk, CFG);
            }
        }
    }
}
