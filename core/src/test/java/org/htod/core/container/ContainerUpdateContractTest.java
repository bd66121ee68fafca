package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link Container#update}, which every layer above builds its crash safety on:
 *
 * <ol>
 *   <li>whatever was written before {@code update} is durable by the time the superblock naming
 *       it is: a power cut that keeps the new superblock keeps those writes;
 *   <li>when {@code update} returns, the new superblock is durable: a power cut right after it
 *       never brings back the old one.
 * </ol>
 *
 * Each is tried with the power cut at the sync that would make the new superblock durable (or
 * right after the return), over 64 seeded crashes that keep each pending write or not.
 */
class ContainerUpdateContractTest {
    private static final ContainerConfig CFG = ContainerConfig.builder().logSize(0).build();
    private static final int SEEDS = 64;

    /** Loses power at the first sync after a write to a superblock slot: that sync does not happen. */
    private static final class CutAtSuperblockSync extends ForwardingDevice {
        private boolean armed;
        private boolean slotWritten;

        CutAtSuperblockSync(BlockDevice inner) {
            super(inner);
        }

        void arm() {
            armed = true;
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            slotWritten |= armed && pos < 2L * Superblock.SLOT_SIZE;
            super.write(pos, src);
        }

        @Override
        public void sync() {
            if (armed && slotWritten) {
                throw new SimulatedCrashException("power lost at the sync after a superblock write");
            }
            super.sync();
        }
    }

    private static ByteBuffer data(int seed) {
        ByteBuffer b = ByteBuffer.allocate(4096);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) (seed * 31 + i * 7 + 1));
        }
        return b;
    }

    @Test
    void writesBeforeAnUpdateAreDurableWhenTheSuperblockNamingThemIs() {
        int keptNew = 0;
        for (int seed = 0; seed < SEEDS; seed++) {
            MemoryDevice platter = new MemoryDevice();
            CrashDevice crash = new CrashDevice(platter);
            CutAtSuperblockSync dev = new CutAtSuperblockSync(crash);
            Container c = Container.create(dev, CFG);
            long heap = c.superblock().heapOffset();
            for (int k = 0; k < 4; k++) {
                dev.write(heap + 8192L * k, data(seed + k)); // what the new superblock will name
            }
            dev.arm();
            assertThrows(SimulatedCrashException.class, () -> c.update(s -> s.withRootCatalog(heap)));
            crash.crash(seed);
            Superblock back = Container.open(platter).superblock();
            if (back.rootCatalog() == heap) {
                keptNew++;
                for (int k = 0; k < 4; k++) {
                    ByteBuffer found = ByteBuffer.allocate(4096);
                    platter.read(heap + 8192L * k, found);
                    assertArrayEquals(data(seed + k).array(), found.array(), "seed " + seed + ": the superblock"
                            + " survived the power cut, but write " + k + " made before the update did not");
                }
            } else {
                assertEquals(0, back.rootCatalog(), "seed " + seed);
            }
        }
        assertTrue(keptNew > SEEDS / 8, "only " + keptNew + " of " + SEEDS + " crashes kept the new superblock");
    }

    @Test
    void anUpdateThatReturnedSurvivesAPowerCut() {
        for (int seed = 0; seed < SEEDS; seed++) {
            MemoryDevice platter = new MemoryDevice();
            CrashDevice crash = new CrashDevice(platter);
            Container c = Container.create(crash, CFG);
            long heap = c.superblock().heapOffset();
            crash.write(heap, data(seed));
            long sequence = c.update(s -> s.withRootCatalog(heap)).sequence();
            crash.crash(seed);
            Superblock back = Container.open(platter).superblock();
            assertEquals(sequence, back.sequence(), "seed " + seed + ": the update returned, then the power failed");
            assertEquals(heap, back.rootCatalog(), "seed " + seed);
        }
    }
}
