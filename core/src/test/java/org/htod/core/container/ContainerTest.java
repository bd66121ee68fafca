package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.IncompatibleFormatException;
import org.htod.core.NotAStoreException;
import org.htod.core.StoreClosedException;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

class ContainerTest {
    private static final ContainerConfig SMALL_LOG = ContainerConfig.builder().logSize(4096).build();

    @Test
    void createThenOpenRoundTripsEveryField() {
        MemoryDevice dev = new MemoryDevice();
        ContainerConfig cfg = ContainerConfig.builder().storageMethod(StorageMethod.PFL).grain(1024).maxQuickList(10)
                .acceptableWaste(300).obaThreshold(4096).logSize(8192).heapCapacity(1L << 30).build();
        Container c = Container.create(dev, cfg, 42, 1234);
        Superblock sb = c.superblock();
        assertEquals(1, sb.sequence());
        assertEquals(42, sb.storeId());
        assertEquals(1234, sb.createdMillis());
        assertEquals(512, sb.sectorSize());
        assertEquals(8192, sb.logOffset());
        assertEquals(8192, sb.logSize());
        assertEquals(16384, sb.heapOffset());
        assertEquals(1L << 30, sb.heapCapacity());
        assertEquals(StorageMethod.PFL, sb.storageMethod());
        assertFalse(sb.clean());
        assertEquals(1024, sb.grain());
        assertEquals(10, sb.maxQuickList());
        assertEquals(300, sb.acceptableWaste());
        assertEquals(4096, sb.obaThreshold());
        assertEquals(0, sb.snapshotOffset());
        assertEquals(0, sb.snapshotLength());
        assertEquals(0, sb.rootCatalog());
        assertEquals(0, sb.checkpointStamp());
        assertEquals(sb, Container.open(dev).superblock());

        Superblock changed = c.update(s -> s.withClean(true).withSnapshot(16384 + 4096, 999)
                .withRootCatalog(16384 + 1024).withCheckpointStamp(-77).withAllocatorTuning(11, 12, 13));
        assertEquals(2, changed.sequence());
        assertSame(changed, c.superblock());
        assertEquals(changed, Container.open(dev).superblock());
        assertEquals(dev.name(), c.name());
        assertSame(dev, c.device());
    }

    @Test
    void createTakesTheHeapFromTheDevice() {
        Superblock file = Container.create(new MemoryDevice(), ContainerConfig.defaults()).superblock();
        assertEquals(8192 + (64L << 20), file.heapOffset());
        assertEquals(1L << 40, file.heapCapacity(), "a device without a fixed capacity gets 1 TiB");

        MemoryDevice disk = new MemoryDevice(256L << 20, 4096);
        Superblock raw = Container.create(disk, ContainerConfig.defaults()).superblock();
        assertEquals((256L << 20) - 8192 - (64L << 20), raw.heapCapacity(), "the rest of a fixed device");
        assertEquals(4096, raw.sectorSize());
        assertNotEquals(0, raw.storeId());
        assertEquals(8192, disk.size(), "only the two slots are written");
    }

    @Test
    void createRefusesWhatDoesNotFit() {
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> Container.create(new MemoryDevice(8192 + 4096, 512), SMALL_LOG));
        assertTrue(small.getMessage().contains("too few"), small.getMessage());
        IllegalArgumentException explicit = assertThrows(IllegalArgumentException.class,
                () -> Container.create(new MemoryDevice(1 << 20, 512),
                        SMALL_LOG.toBuilder().heapCapacity(1 << 20).build()));
        assertTrue(explicit.getMessage().contains("too few for a heap of 1048576 bytes at offset 12288"),
                explicit.getMessage());
        IllegalArgumentException sector = assertThrows(IllegalArgumentException.class,
                () -> Container.create(new MemoryDevice(Long.MAX_VALUE, 8192), SMALL_LOG));
        assertTrue(sector.getMessage().contains("sectorSize"), sector.getMessage());
    }

    @Test
    void createRefusesADeviceHoldingAStore() {
        MemoryDevice dev = new MemoryDevice();
        Container.create(dev, SMALL_LOG);
        HtodException e = assertThrows(HtodException.class, () -> Container.create(dev, SMALL_LOG));
        assertEquals(dev.name() + " already holds an htod store (magic HTODSTOR at offset 0); open it, or erase"
                + " the device before creating a store", e.getMessage());
        // Still refused when only copy B is left.
        dev.write(0, ByteBuffer.allocate(Superblock.SLOT_SIZE));
        HtodException b = assertThrows(HtodException.class, () -> Container.create(dev, SMALL_LOG));
        assertTrue(b.getMessage().contains("at offset 4096"), b.getMessage());
    }

    @Test
    void updateWritesBothSlotsAndIncreasesTheSequence() {
        MemoryDevice dev = new MemoryDevice();
        Container c = Container.create(dev, SMALL_LOG);
        long heap = c.superblock().heapOffset();
        assertEquals(1, Superblock.decode(Slots.read(dev, Slots.A), "", 0).sequence());
        assertEquals(1, Superblock.decode(Slots.read(dev, Slots.B), "", 4096).sequence());
        for (int i = 1; i <= 6; i++) {
            long root = heap + i * 512L;
            Superblock next = c.update(s -> s.withRootCatalog(root));
            assertEquals(1 + i, next.sequence());
            assertEquals(next, Superblock.decode(Slots.read(dev, Slots.A), "", 0), "update " + i + " wrote slot A");
            assertEquals(next, Superblock.decode(Slots.read(dev, Slots.B), "", 4096), "update " + i + " wrote slot B");
            assertEquals(root, Container.open(dev).superblock().rootCatalog());
        }
    }

    @Test
    void openPicksTheHigherValidSequence() {
        // Left by an update cut between its two writes: A holds the new superblock, B the old one.
        MemoryDevice dev = new MemoryDevice();
        Container c = Container.create(dev, SMALL_LOG);
        ByteBuffer old = Slots.read(dev, Slots.B);
        c.update(s -> s.withCheckpointStamp(5));
        Slots.write(dev, Slots.B, old);
        assertEquals(2, Container.open(dev).superblock().sequence(), "A (2) over B (1)");
        assertEquals(5, Container.open(dev).superblock().checkpointStamp());
        Slots.write(dev, Slots.A, old);
        Slots.write(dev, Slots.B, c.superblock().encode());
        assertEquals(2, Container.open(dev).superblock().sequence(), "B (2) over A (1)");
    }

    @Test
    void oneCorruptCopyOpensFromTheOtherAndLosesNothing() {
        MemoryDevice dev = new MemoryDevice();
        Container c = Container.create(dev, SMALL_LOG);
        long heap = c.superblock().heapOffset();
        c.update(s -> s.withRootCatalog(heap)); // seq 2 in both slots

        Slots.flipBit(dev, Slots.A, 100);
        Superblock fromB = Container.open(dev).superblock();
        assertEquals(2, fromB.sequence());
        assertEquals(heap, fromB.rootCatalog(), "the other copy holds the same superblock, not an older one");

        Slots.flipBit(dev, Slots.A, 100);
        Slots.flipBit(dev, Slots.B, 20);
        Superblock fromA = Container.open(dev).superblock();
        assertEquals(2, fromA.sequence());
        assertEquals(heap, fromA.rootCatalog());

        // The next update overwrites the damaged copy, and both are valid again.
        Container reopened = Container.open(dev);
        reopened.update(s -> s.withCheckpointStamp(9));
        assertEquals(3, Superblock.decode(Slots.read(dev, Slots.B), "", 4096).sequence());
    }

    @Test
    void emptyDeviceIsNotAStore() {
        MemoryDevice dev = new MemoryDevice();
        NotAStoreException e = assertThrows(NotAStoreException.class, () -> Container.open(dev));
        assertEquals(dev.name() + " is not an htod store: expected magic HTODSTOR at offset 0, found an empty device",
                e.getMessage());
    }

    @Test
    void zeroedDeviceIsNotAStore() {
        MemoryDevice dev = new MemoryDevice();
        dev.write(0, ByteBuffer.allocate(3 * Superblock.SLOT_SIZE));
        NotAStoreException e = assertThrows(NotAStoreException.class, () -> Container.open(dev));
        assertEquals(dev.name() + " is not an htod store: expected magic HTODSTOR at offset 0, found "
                + "0x0000000000000000; and at offset 4096, found 0x0000000000000000", e.getMessage());
    }

    @Test
    void shortDeviceIsNotAStore() {
        MemoryDevice dev = new MemoryDevice();
        dev.write(0, ByteBuffer.wrap("HTOD".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        NotAStoreException e = assertThrows(NotAStoreException.class, () -> Container.open(dev));
        assertTrue(e.getMessage().contains("found 0x48544f4400000000"), e.getMessage());
    }

    @Test
    void randomBytesAreNotAStore() {
        long seed = new Random().nextLong();
        Random r = new Random(seed);
        for (int i = 0; i < 50; i++) {
            MemoryDevice dev = new MemoryDevice();
            byte[] noise = new byte[4 * Superblock.SLOT_SIZE];
            r.nextBytes(noise);
            dev.write(0, ByteBuffer.wrap(noise));
            NotAStoreException e = assertThrows(NotAStoreException.class, () -> Container.open(dev), "seed=" + seed);
            assertTrue(e.getMessage().startsWith(dev.name() + " is not an htod store: expected magic HTODSTOR at"
                    + " offset 0, found 0x"), "seed=" + seed + ": " + e.getMessage());
        }
    }

    @Test
    void bothCopiesDamagedIsCorruptAndSaysWhere() {
        MemoryDevice dev = new MemoryDevice();
        Container.create(dev, SMALL_LOG);
        Slots.flipBit(dev, Slots.A, 30);
        Slots.flipBit(dev, Slots.B, 70);
        CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> Container.open(dev));
        String m = e.getMessage();
        assertTrue(m.startsWith(dev.name() + " has no valid superblock: copy A: superblock at offset 0 is damaged:"
                + " expected CRC32C 0x"), m);
        assertTrue(m.contains("; copy B: superblock at offset 4096 is damaged: expected CRC32C 0x"), m);
        assertTrue(m.contains("found 0x"), m);
        assertTrue(m.contains("at offset 188") && m.contains("at offset 4284"), m);
        assertEquals(0, e.offset());
    }

    @Test
    void oneDamagedCopyBesideAForeignSlotIsCorrupt() {
        MemoryDevice dev = new MemoryDevice();
        Container.create(dev, SMALL_LOG);
        dev.write(0, ByteBuffer.allocate(Superblock.SLOT_SIZE));
        Slots.flipBit(dev, Slots.B, 70);
        CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> Container.open(dev));
        assertTrue(e.getMessage().contains("copy A: expected magic HTODSTOR at offset 0, found 0x0000000000000000;"
                + " copy B: superblock at offset 4096 is damaged"), e.getMessage());
        assertEquals(4096, e.offset());
    }

    @Test
    void formatTooNew() {
        MemoryDevice dev = new MemoryDevice();
        Container.create(dev, SMALL_LOG);
        for (long slot : new long[] {Slots.A, Slots.B}) {
            ByteBuffer b = Slots.read(dev, slot);
            b.putInt(Superblock.FORMAT_VERSION_OFFSET, Superblock.FORMAT_VERSION + 1);
            Slots.write(dev, slot, Slots.reseal(b));
        }
        IncompatibleFormatException e = assertThrows(IncompatibleFormatException.class, () -> Container.open(dev));
        assertTrue(e.isTooNew());
        int v = Superblock.FORMAT_VERSION;
        assertEquals("format version " + (v + 1) + " of " + dev.name() + " is too new: this library reads versions " + v
                + " to " + v, e.getMessage());
    }

    @Test
    void formatTooOld() {
        MemoryDevice dev = new MemoryDevice();
        Container.create(dev, SMALL_LOG);
        for (long slot : new long[] {Slots.A, Slots.B}) {
            ByteBuffer b = Slots.read(dev, slot);
            b.putInt(Superblock.FORMAT_VERSION_OFFSET, Superblock.FORMAT_VERSION - 1);
            Slots.write(dev, slot, Slots.reseal(b));
        }
        IncompatibleFormatException e = assertThrows(IncompatibleFormatException.class, () -> Container.open(dev));
        assertFalse(e.isTooNew());
        assertTrue(e.getMessage().contains("too old"), e.getMessage());
    }

    @Test
    void anIntactNewerCopyWinsOverAValidOne() {
        // A newer library may have rewritten one copy; this one cannot know which copy is newer.
        MemoryDevice dev = new MemoryDevice();
        Container.create(dev, SMALL_LOG);
        ByteBuffer b = Slots.read(dev, Slots.A);
        b.putInt(Superblock.FORMAT_VERSION_OFFSET, Superblock.FORMAT_VERSION + 1);
        Slots.write(dev, Slots.A, Slots.reseal(b));
        assertTrue(assertThrows(IncompatibleFormatException.class, () -> Container.open(dev)).isTooNew());
    }

    @Test
    void copiesOfTwoDifferentStoresAreCorrupt() {
        MemoryDevice one = new MemoryDevice();
        MemoryDevice two = new MemoryDevice();
        Container.create(one, SMALL_LOG, 1, 0);
        Container.create(two, SMALL_LOG, 2, 0);
        Slots.write(one, Slots.B, Slots.read(two, Slots.B));
        CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> Container.open(one));
        assertTrue(e.getMessage().contains("belong to different stores: storeId 0x0000000000000001 at offset 0,"
                + " storeId 0x0000000000000002 at offset 4096"), e.getMessage());
    }

    @Test
    void heapBeyondTheDeviceIsCorrupt() {
        MemoryDevice big = new MemoryDevice(1 << 20, 512);
        Container.create(big, ContainerConfig.builder().logSize(0).build());
        CorruptStoreException cap = assertThrows(CorruptStoreException.class,
                () -> Container.open(Slots.copy(big, 64 << 10)));
        assertTrue(cap.getMessage().contains("field heapCapacity at offset 4168: expected at most 57344"
                + " (device capacity 65536 - heapOffset 8192), found 1040384"), cap.getMessage());
        assertEquals(4096 + 72, cap.offset());

        MemoryDevice withLog = new MemoryDevice(4 << 20, 512);
        Container.create(withLog, ContainerConfig.builder().logSize(2 << 20).build());
        CorruptStoreException off = assertThrows(CorruptStoreException.class,
                () -> Container.open(Slots.copy(withLog, 1 << 20)));
        assertTrue(off.getMessage().contains("field heapOffset at offset 4160: expected at most the device capacity"
                + " 1048576, found 2105344"), off.getMessage());
    }

    @Test
    void updateMayNotChangeIdentityOrGeometry() {
        MemoryDevice dev = new MemoryDevice();
        Container c = Container.create(dev, SMALL_LOG);
        Superblock cur = c.superblock();
        Superblock otherGrain = new Superblock(cur.sequence(), cur.storeId(), cur.createdMillis(), cur.sectorSize(),
                cur.logOffset(), cur.logSize(), cur.heapOffset(), cur.heapCapacity(), cur.storageMethod(),
                cur.clean(), 1024, cur.maxQuickList(), cur.acceptableWaste(), cur.obaThreshold(),
                cur.snapshotOffset(), cur.snapshotLength(), cur.rootCatalog(), cur.checkpointStamp(), cur.log());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.update(s -> otherGrain));
        assertEquals(dev.name() + ": an update may not change grain (from 512 to 1024)", e.getMessage());
        Superblock otherMethod = new Superblock(cur.sequence(), cur.storeId(), cur.createdMillis(), cur.sectorSize(),
                cur.logOffset(), cur.logSize(), cur.heapOffset(), cur.heapCapacity(), StorageMethod.PL,
                cur.clean(), cur.grain(), cur.maxQuickList(), cur.acceptableWaste(), cur.obaThreshold(),
                cur.snapshotOffset(), cur.snapshotLength(), cur.rootCatalog(), cur.checkpointStamp(), cur.log());
        assertThrows(IllegalArgumentException.class, () -> c.update(s -> otherMethod));
        assertSame(cur, c.superblock());
        assertEquals(cur, Container.open(dev).superblock(), "nothing was written");
        assertEquals(2, c.update(s -> s).sequence(), "the container still works");
    }

    @Test
    void aFailedUpdateMayLandYetTheNextOneWins() {
        MemoryDevice mem = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(mem);
        Container c = Container.create(dev, SMALL_LOG);
        Superblock before = c.superblock();
        // Slot A is written, the sync after it fails: A holds the failed superblock.
        dev.failSync(2, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(HtodIOException.class, () -> c.update(s -> s.withCheckpointStamp(1)));
        assertSame(before, c.superblock(), "a failed update does not become current");
        assertEquals(1, Container.open(mem.reopen()).superblock().checkpointStamp(), "yet it may have landed");
        Superblock next = c.update(s -> s.withCheckpointStamp(2));
        assertTrue(next.sequence() > before.sequence() + 1, "above the failed one's sequence: " + next.sequence());
        assertEquals(next, Container.open(mem.reopen()).superblock(), "the later update wins on reopen");
    }

    @Test
    void closedContainerRefusesCalls() {
        MemoryDevice dev = new MemoryDevice();
        Container c = Container.create(dev, SMALL_LOG);
        c.close();
        c.close();
        assertThrows(StoreClosedException.class, c::superblock);
        assertThrows(StoreClosedException.class, c::device);
        StoreClosedException e = assertThrows(StoreClosedException.class, () -> c.update(s -> s));
        assertEquals("container on " + dev.name() + " is closed", e.getMessage());
        assertThrows(StoreClosedException.class, dev::size, "closing the container closes the device");
        assertEquals(dev.name(), c.name());
    }
}
