package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;
import org.htod.core.IncompatibleFormatException;
import org.htod.core.NotAStoreException;
import org.junit.jupiter.api.Test;

class SuperblockTest {
    private static final String STORE = "test.htod";

    static Superblock sample() {
        return new Superblock(7, 0x1122334455667788L, 1_700_000_000_000L, 4096, 8192, 1 << 20, 8192 + (1 << 20),
                1L << 30, StorageMethod.PL, true, 1024, 40, 3000, 16384, 8192 + (1 << 20) + 4096, 777,
                8192 + (1 << 20) + 8192, 0x0badf00dL, new Superblock.LogState(3, 1000, 5000, true));
    }

    /** A random valid superblock: every field drawn independently within its limits. */
    static Superblock random(Random r) {
        int sector = 512 << r.nextInt(4);
        long logSize = 4096L * r.nextInt(1 << 16);
        long heapOffset = Superblock.LOG_OFFSET + logSize;
        int grain = 64 * (1 + r.nextInt(1 << 10));
        long heapCapacity = grain + (r.nextLong() >>> 3);
        long heapEnd = heapOffset + heapCapacity;
        long snapOffset = 0;
        long snapLength = 0;
        if (r.nextBoolean()) {
            snapOffset = heapOffset + (long) (r.nextDouble() * (heapCapacity / 2));
            snapLength = (long) (r.nextDouble() * (heapEnd - snapOffset));
        }
        long root = r.nextBoolean() ? 0 : heapOffset + (long) (r.nextDouble() * (heapCapacity - 1));
        long id = r.nextLong();
        return new Superblock(1 + (r.nextLong() >>> 1), id == 0 ? 1 : id, r.nextLong(), sector,
                Superblock.LOG_OFFSET, logSize, heapOffset, heapCapacity,
                StorageMethod.values()[r.nextInt(3)], r.nextBoolean(), grain, 1 + r.nextInt(Limits.MAX_QUICK_LISTS),
                r.nextInt(Integer.MAX_VALUE), r.nextInt(Integer.MAX_VALUE), snapOffset, snapLength, root,
                r.nextLong(), randomLog(r));
    }

    private static Superblock.LogState randomLog(Random r) {
        long start = r.nextLong() >>> 2;
        return new Superblock.LogState(r.nextLong() >>> 1, start, start + (r.nextLong() >>> 2), r.nextBoolean());
    }

    @Test
    void encodeWritesEveryFieldAtItsOffset() {
        Superblock sb = sample();
        ByteBuffer b = sb.encode();
        assertEquals(0, b.position());
        assertEquals(Superblock.SLOT_SIZE, b.remaining());
        byte[] magic = new byte[8];
        b.get(0, magic);
        assertArrayEquals("HTODSTOR".getBytes(StandardCharsets.US_ASCII), magic);
        assertEquals(Superblock.FORMAT_VERSION, b.getInt(8));
        assertEquals(192, b.getInt(12));
        assertEquals(7, b.getLong(16));
        assertEquals(0x1122334455667788L, b.getLong(24));
        assertEquals(1_700_000_000_000L, b.getLong(32));
        assertEquals(4096, b.getInt(40));
        assertEquals(4096, b.getInt(44));
        assertEquals(8192, b.getLong(48));
        assertEquals(1 << 20, b.getLong(56));
        assertEquals(8192 + (1 << 20), b.getLong(64));
        assertEquals(1L << 30, b.getLong(72));
        assertEquals(2, b.get(80));
        assertEquals(3, b.get(81), "clean and log active");
        assertEquals(0, b.getShort(82));
        assertEquals(1024, b.getInt(84));
        assertEquals(40, b.getInt(88));
        assertEquals(3000, b.getInt(92));
        assertEquals(16384, b.getInt(96));
        assertEquals(0, b.getInt(100));
        assertEquals(8192 + (1 << 20) + 4096, b.getLong(104));
        assertEquals(777, b.getLong(112));
        assertEquals(8192 + (1 << 20) + 8192, b.getLong(120));
        assertEquals(0x0badf00dL, b.getLong(128));
        assertEquals(3, b.getLong(136));
        assertEquals(1000, b.getLong(144));
        assertEquals(5000, b.getLong(152));
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, 188);
        assertEquals((int) crc.getValue(), b.getInt(188));
        for (int i = 160; i < 188; i++) {
            assertEquals(0, b.get(i), "reserved byte " + i);
        }
        for (int i = 192; i < Superblock.SLOT_SIZE; i++) {
            assertEquals(0, b.get(i), "slot byte " + i);
        }
    }

    @Test
    void decodeRoundTripsRandomSuperblocks() {
        long seed = new Random().nextLong();
        Random r = new Random(seed);
        for (int i = 0; i < 2000; i++) {
            Superblock sb = random(r);
            assertEquals(sb, Superblock.decode(sb.encode(), STORE, 0), "seed=" + seed + " iteration " + i);
        }
    }

    @Test
    void decodeReadsFromThePositionWithoutMovingIt() {
        ByteBuffer b = ByteBuffer.allocate(Superblock.SLOT_SIZE + 100);
        b.position(100);
        b.put(sample().encode());
        b.position(100);
        assertEquals(sample(), Superblock.decode(b, STORE, 0));
        assertEquals(100, b.position());
        assertThrows(IllegalArgumentException.class,
                () -> Superblock.decode(ByteBuffer.allocate(Superblock.RECORD_LENGTH), STORE, 0));
    }

    @Test
    void withMethodsChangeOnlyTheirField() {
        Superblock sb = sample();
        assertEquals(false, sb.withClean(false).clean());
        assertEquals(sb, sb.withClean(false).withClean(true));
        Superblock snap = sb.withSnapshot(0, 0);
        assertEquals(0, snap.snapshotOffset());
        assertEquals(0, snap.snapshotLength());
        assertEquals(sb, snap.withSnapshot(sb.snapshotOffset(), sb.snapshotLength()));
        assertEquals(sb.heapOffset(), sb.withRootCatalog(sb.heapOffset()).rootCatalog());
        assertEquals(sb, sb.withRootCatalog(0).withRootCatalog(sb.rootCatalog()));
        assertEquals(-5, sb.withCheckpointStamp(-5).checkpointStamp());
        assertEquals(sb, sb.withCheckpointStamp(-5).withCheckpointStamp(sb.checkpointStamp()));
        Superblock tuned = sb.withAllocatorTuning(9, 10, 11);
        assertEquals(9, tuned.maxQuickList());
        assertEquals(10, tuned.acceptableWaste());
        assertEquals(11, tuned.obaThreshold());
        assertEquals(sb, tuned.withAllocatorTuning(sb.maxQuickList(), sb.acceptableWaste(), sb.obaThreshold()));
        assertEquals(99, sb.withSequence(99).sequence());
        assertEquals(sb.heapOffset() + sb.heapCapacity(), sb.heapEnd());
    }

    @Test
    void constructorRejectsEveryOutOfRangeField() {
        Superblock s = sample();
        long h = s.heapOffset();
        assertRejected("sequence", () -> s.withSequence(0));
        assertRejected("storeId", () -> new Superblock(1, 0, 0, 512, 8192, 0, 8192, 4096, StorageMethod.TS, false,
                512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("sectorSize", () -> new Superblock(1, 1, 0, 768, 8192, 0, 8192, 4096, StorageMethod.TS,
                false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("sectorSize", () -> new Superblock(1, 1, 0, 256, 8192, 0, 8192, 4096, StorageMethod.TS,
                false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("logOffset", () -> new Superblock(1, 1, 0, 512, 4096, 0, 4096, 4096, StorageMethod.TS,
                false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("logSize", () -> new Superblock(1, 1, 0, 512, 8192, 100, 8292, 4096, StorageMethod.TS,
                false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("heapOffset", () -> new Superblock(1, 1, 0, 512, 8192, 4096, 8192, 4096, StorageMethod.TS,
                false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("heapCapacity", () -> new Superblock(1, 1, 0, 512, 8192, 0, 8192, 256, StorageMethod.TS,
                false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("heapCapacity", () -> new Superblock(1, 1, 0, 512, 8192, 0, 8192, Long.MAX_VALUE,
                StorageMethod.TS, false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("grain", () -> new Superblock(1, 1, 0, 512, 8192, 0, 8192, 4096, StorageMethod.TS, false,
                100, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
        assertRejected("maxQuickList", () -> s.withAllocatorTuning(0, 1, 1));
        assertRejected("acceptableWaste", () -> s.withAllocatorTuning(1, -1, 1));
        assertRejected("obaThreshold", () -> s.withAllocatorTuning(1, 1, -1));
        assertRejected("snapshotLength", () -> s.withSnapshot(0, 5));
        assertRejected("snapshot", () -> s.withSnapshot(4096, 5));
        assertRejected("snapshot", () -> s.withSnapshot(s.heapEnd() - 10, 11));
        assertRejected("snapshot", () -> s.withSnapshot(h, -1));
        assertRejected("rootCatalog", () -> s.withRootCatalog(h - 1));
        assertRejected("rootCatalog", () -> s.withRootCatalog(s.heapEnd()));
        assertThrows(NullPointerException.class, () -> new Superblock(1, 1, 0, 512, 8192, 0, 8192, 4096, null,
                false, 512, 75, 2000, 8192, 0, 0, 0, 0, Superblock.LogState.NONE));
    }

    private static void assertRejected(String field, org.junit.jupiter.api.function.Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e, field);
        assertTrue(x.getMessage().startsWith(field), x.getMessage());
    }

    @Test
    void zeroSlotIsNotAStore() {
        NotAStoreException e = assertThrows(NotAStoreException.class,
                () -> Superblock.decode(ByteBuffer.allocate(Superblock.SLOT_SIZE), STORE, 4096));
        assertEquals("test.htod is not an htod store: expected magic HTODSTOR at offset 4096, found "
                + "0x0000000000000000", e.getMessage());
    }

    @Test
    void foreignTextIsShownAsText() {
        ByteBuffer b = ByteBuffer.allocate(Superblock.SLOT_SIZE);
        b.put(0, "SQLite format 3".getBytes(StandardCharsets.US_ASCII));
        NotAStoreException e = assertThrows(NotAStoreException.class, () -> Superblock.decode(b, STORE, 0));
        assertTrue(e.getMessage().endsWith("found 0x53514c6974652066 (\"SQLite f\")"), e.getMessage());
    }

    @Test
    void damagedMagicInOurRecordIsCorruptNotForeign() {
        ByteBuffer b = sample().encode();
        b.put(3, (byte) 'X');
        CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> Superblock.decode(b, STORE, 0));
        assertTrue(e.getMessage().contains("superblock at offset 0 is damaged: expected magic HTODSTOR, found 0x48544f5853544f52"),
                e.getMessage());
        assertEquals(0, e.offset());
    }

    @Test
    void crcMismatchSaysExpectedAndFound() {
        ByteBuffer b = sample().encode();
        int stored = b.getInt(188);
        b.put(30, (byte) (b.get(30) ^ 1));
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, 188);
        CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> Superblock.decode(b, STORE, 4096));
        assertEquals("test.htod: superblock at offset 4096 is damaged: expected CRC32C "
                + String.format("0x%08x", (int) crc.getValue()) + " of bytes 0..187, found "
                + String.format("0x%08x", stored) + " at offset 4284", e.getMessage());
        assertEquals(4096, e.offset());
    }

    @Test
    void newerVersionIsTooNewEvenWithAnotherRecordLength() {
        ByteBuffer b = sample().encode();
        b.putInt(8, Superblock.FORMAT_VERSION + 1);
        b.putInt(12, 300);
        b.put(250, (byte) 42); // a field this version does not know
        IncompatibleFormatException e = assertThrows(IncompatibleFormatException.class,
                () -> Superblock.decode(Slots.reseal(b), STORE, 0));
        assertTrue(e.isTooNew());
        assertEquals(Superblock.FORMAT_VERSION + 1, e.foundVersion());
        assertTrue(e.getMessage().contains("test.htod"), e.getMessage());
        assertTrue(e.getMessage().contains("too new"), e.getMessage());
    }

    @Test
    void versionOneIsTooOld() {
        // A version 1 store: its 160-byte record, intact, is refused with "too old", not as damage.
        ByteBuffer b = sample().encode();
        b.putInt(8, 1);
        b.putInt(12, 160);
        for (int i = 136; i < 192; i++) {
            b.put(i, (byte) 0);
        }
        IncompatibleFormatException e = assertThrows(IncompatibleFormatException.class,
                () -> Superblock.decode(Slots.reseal(b), STORE, 0));
        assertFalse(e.isTooNew());
        assertTrue(e.getMessage().contains("too old"), e.getMessage());
    }

    @Test
    void versionWithBrokenCrcIsCorruptNotIncompatible() {
        ByteBuffer b = sample().encode();
        b.putInt(8, Superblock.FORMAT_VERSION + 1); // CRC not recomputed: damage, not a newer writer
        assertThrows(CorruptStoreException.class, () -> Superblock.decode(b, STORE, 0));
    }

    @Test
    void recordLengthOutOfFrameIsCorrupt() {
        ByteBuffer b = sample().encode();
        b.putInt(12, 5000);
        CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> Superblock.decode(b, STORE, 0));
        assertTrue(e.getMessage().contains("field recordLength at offset 12: expected 192, found 5000"),
                e.getMessage());
    }

    @Test
    void intactRecordOfWrongLengthForThisVersionIsCorrupt() {
        ByteBuffer b = sample().encode();
        b.putInt(12, 196);
        CorruptStoreException e = assertThrows(CorruptStoreException.class,
                () -> Superblock.decode(Slots.reseal(b), STORE, 0));
        assertTrue(e.getMessage().contains("field recordLength at offset 12: expected 192, found 196"),
                e.getMessage());
    }

    @Test
    void badFieldsUnderAValidCrcAreNamed() {
        assertBadField("slotSize", b -> b.putInt(44, 8192));
        assertBadField("storageMethod", b -> b.put(80, (byte) 9));
        assertBadField("storageMethod", b -> b.put(80, (byte) 0));
        assertBadField("flags", b -> b.put(81, (byte) 0x81));
        assertBadField("reserved", b -> b.put(83, (byte) 1));
        assertBadField("reserved", b -> b.put(101, (byte) 1));
        assertBadField("reserved", b -> b.put(170, (byte) 1));
        assertBadField("log", b -> b.putLong(152, 1)); // checkpoint before start
        assertBadField("sectorSize", b -> b.putInt(40, 3));
        assertBadField("grain", b -> b.putInt(84, 100));
        assertBadField("heapOffset", b -> b.putLong(64, 1 << 30));
        assertBadField("sequence", b -> b.putLong(16, 0));
        assertBadField("rootCatalog", b -> b.putLong(120, 17));
    }

    private static void assertBadField(String field, Consumer<ByteBuffer> damage) {
        ByteBuffer b = sample().encode();
        damage.accept(b);
        CorruptStoreException e = assertThrows(CorruptStoreException.class,
                () -> Superblock.decode(Slots.reseal(b), STORE, 4096), field);
        assertTrue(e.getMessage().startsWith("test.htod: superblock at offset 4096 is damaged: "), e.getMessage());
        assertTrue(e.getMessage().contains(field), e.getMessage());
        assertTrue(e.getMessage().contains("found"), e.getMessage());
    }
}
