package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.htod.Codec;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.core.CorruptStoreException;
import org.htod.core.IncompatibleFormatException;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * Each table hashes its keys with SipHash-2-4 under a key of its own, kept in its header (format
 * version 2), so that keys crafted to share a bucket under the fixed-seed hash of version-1
 * tables spread; version-1 tables keep opening and working with their own function.
 */
class KeyedHashTest {
    private static final long LOG = 1 << 20;

    private static TableOptions opts() {
        return TableOptions.defaults().withClock(() -> 0L).withCacheBytes(1 << 20);
    }

    private static TableStore create(BlockDevice dev, Supplier<TableHash> hashes) {
        return TableStore.open(Storage.create(dev, ContainerConfig.builder().grain(64).logSize(LOG).build()), opts(),
                hashes);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void put(HashtableOnDisk t, String k, String v) {
        t.update(bytes(k), cur -> Change.put(bytes(v), 0));
    }

    private static void assertHolds(HashtableOnDisk t, String k, String v) {
        StoredEntry e = t.get(bytes(k));
        assertNotNull(e, k);
        assertArrayEquals(bytes(v), e.value(), k);
    }

    @Test
    void everyNewTableGetsAKeyOfItsOwn() {
        TableStore ts = TableStore.open(Storage.create(new MemoryDevice(), ContainerConfig.builder().grain(64)
                .logSize(0).build()), opts());
        TableStore other = TableStore.open(Storage.create(new MemoryDevice(), ContainerConfig.builder().grain(64)
                .logSize(0).build()), opts());
        try {
            List<TableHash> hs = List.of(ts.catalog().hashing, ts.table("a", true).hashing, ts.table("b", true).hashing,
                    other.catalog().hashing, other.table("a", true).hashing);
            for (int i = 0; i < hs.size(); i++) {
                assertEquals(2, hs.get(i).formatVersion, "table " + i);
                for (int j = 0; j < i; j++) {
                    assertNotEquals(hs.get(j), hs.get(i), "tables " + j + " and " + i);
                }
            }
        } finally {
            ts.close();
            other.close();
        }
    }

    @Test
    void theKeySurvivesACrashAndACleanReopen() {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        TableStore ts = create(dev, TableHash::fresh);
        HashtableOnDisk t = ts.table("m", true);
        TableHash h = t.hashing;
        for (int i = 0; i < 300; i++) {
            put(t, "k" + i, "v" + i);
        }
        ts.sync();
        for (int i = 300; i < 400; i++) {
            put(t, "k" + i, "v" + i); // lost or kept by the crash
        }
        dev.crash(0x4ea5_0002L);
        TableStore after = TableStore.open(Storage.open(disk.reopen()), opts());
        assertNotNull(after.recovery(), "an unclean open recovers");
        HashtableOnDisk m = after.table("m", false);
        assertEquals(h, m.hashing);
        for (int i = 0; i < 300; i++) {
            assertHolds(m, "k" + i, "v" + i);
        }
        after.verify(true);
        after.close();
        TableStore again = TableStore.open(Storage.open(disk.reopen()), opts());
        assertEquals(h, again.table("m", false).hashing);
        assertHolds(again.table("m", false), "k299", "v299");
        again.close();
    }

    /** A store of version-1 tables, written with the fixed seed, opens, reads, writes and verifies, in both modes. */
    @Test
    void aVersionOneTableKeepsWorking() {
        MemoryDevice disk = new MemoryDevice();
        TableStore ts = create(disk, () -> TableHash.FIXED_SEED);
        HashtableOnDisk t = ts.table("m", true);
        for (int i = 0; i < 200; i++) {
            put(t, "k" + i, "v" + i);
        }
        ByteBuffer slot = ts.heap().read(t.header);
        assertEquals(1, slot.getInt(TableHeader.VERSION_OFFSET), "formatVersion in slot A");
        assertEquals(Hashing.hash(bytes("k7")), t.get(bytes("k7")).hash);
        ts.close();

        TableStore direct = TableStore.open(Storage.open(disk.reopen()), opts());
        HashtableOnDisk m = direct.table("m", false);
        assertEquals(TableHash.FIXED_SEED, m.hashing);
        assertEquals(TableHash.FIXED_SEED, direct.catalog().hashing);
        for (int i = 0; i < 200; i++) {
            assertHolds(m, "k" + i, "v" + i);
        }
        for (int i = 200; i < 600; i++) {
            put(m, "k" + i, "v" + i); // through two doublings
        }
        assertEquals(2, direct.table("n", true).hashing.formatVersion, "a new table of the store is keyed");
        direct.verify(true);
        direct.close();

        try (HtodStore s = Htod.builder(disk.reopen()).grain(64).logSize(LOG).open()) { // log mode, converted
            HtodMap<String, String> hm = s.map("m", Codec.string(), Codec.string());
            assertEquals("v599", hm.get("k599"));
            for (int i = 600; i < 900; i++) {
                hm.put("k" + i, "v" + i);
            }
            s.checkpoint();
            assertTrue(s.verify().ok(), s.verify().toString());
        }
        try (HtodStore s = Htod.builder(disk.reopen()).grain(64).logSize(LOG).open()) { // log mode, reopened
            assertEquals(TableHash.FIXED_SEED, LayerAccess.layer(s).tables().table("m", false).hashing);
            assertEquals("v899", s.map("m", Codec.string(), Codec.string()).get("k899"));
            assertTrue(s.verify().ok(), s.verify().toString());
        }
    }

    /**
     * 2,000 keys whose fixed-seed hashes share their low 10 bits: one chain of a version-1 table
     * until it has 1,024 buckets, four after. A keyed table spreads them.
     */
    @Test
    void keysCraftedAgainstTheFixedSeedSpreadInAKeyedTable() {
        List<byte[]> keys = new ArrayList<>();
        for (long i = 0; keys.size() < 2000; i++) {
            byte[] k = bytes("/page?id=" + i);
            if ((Hashing.hash(k) & 1023) == 0) {
                keys.add(k);
            }
        }
        long fixed = longestChain(TableHash.FIXED_SEED, keys);
        assertTrue(fixed >= 500, "a version-1 table puts them in at most 4 chains, the longest: " + fixed);
        long keyed = longestChain(TableHash.fresh(), keys);
        assertTrue(keyed <= 12, "the longest chain of a keyed table holding them: " + keyed);
    }

    /** The longest chain of a new table of function {@code h} holding {@code keys}, by the verifier's count. */
    private static long longestChain(TableHash h, List<byte[]> keys) {
        boolean[] first = {true};
        TableStore ts = create(new MemoryDevice(), () -> {
            boolean catalog = first[0];
            first[0] = false;
            return catalog ? TableHash.fresh() : h;
        });
        try {
            HashtableOnDisk t = ts.table("m", true);
            assertEquals(h, t.hashing);
            for (byte[] k : keys) {
                t.update(k, cur -> Change.put(k, 0));
            }
            TableVerifyReport r = ts.verify(true);
            assertEquals(keys.size(), r.entries());
            return r.longestChain();
        } finally {
            ts.close();
        }
    }

    /** A header slot of a format version other than 1 and 2, whose CRC matches, is refused as too new. */
    @Test
    void aTableHeaderOfVersionThreeIsRefused() {
        MemoryDevice disk = new MemoryDevice();
        TableStore ts = create(disk, TableHash::fresh);
        HashtableOnDisk t = ts.table("m", true);
        long at = ts.heap().address(t.header) + HashtableOnDisk.BLOCK_HEADER; // slot A
        ts.close();
        MemoryDevice d = disk.reopen();
        ByteBuffer slot = ByteBuffer.allocate(TableHeader.SLOT_SIZE);
        d.read(at, slot);
        slot.putInt(TableHeader.VERSION_OFFSET, 3);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(slot.array(), 0, TableHeader.CRC_OFFSET);
        slot.putInt(TableHeader.CRC_OFFSET, (int) crc.getValue());
        d.write(at, slot.clear());
        IncompatibleFormatException e = assertThrows(IncompatibleFormatException.class,
                () -> TableStore.open(Storage.open(d.reopen()), opts()).close());
        assertTrue(e.getMessage().contains("table header"), e.getMessage());
    }

    /** A bit of the key flipped in the header's current slot is damage its CRC finds. */
    @Test
    void aDamagedKeyIsCaughtByTheHeaderCrc() {
        for (int bit : new int[] {0, 63, 64, 127}) {
            MemoryDevice disk = new MemoryDevice();
            TableStore ts = create(disk, TableHash::fresh);
            HashtableOnDisk t = ts.table("m", true);
            put(t, "k", "v");
            long header = t.header;
            long at = ts.heap().address(header) + HashtableOnDisk.BLOCK_HEADER;
            ts.close();
            MemoryDevice d = disk.reopen();
            ByteBuffer seq = ByteBuffer.allocate(8);
            d.read(at + TableHeader.SEQUENCE_OFFSET, seq);
            long seqA = seq.getLong(0);
            d.read(at + TableHeader.SLOT_SIZE + TableHeader.SEQUENCE_OFFSET, seq.clear());
            long slot = at + (seqA > seq.getLong(0) ? 0 : TableHeader.SLOT_SIZE); // the current one
            long field = slot + TableHeader.HASH_KEY0_OFFSET + bit / 8;
            ByteBuffer b = ByteBuffer.allocate(1);
            d.read(field, b);
            d.write(field, ByteBuffer.wrap(new byte[] {(byte) (b.get(0) ^ (1 << (bit % 8)))}));
            CorruptStoreException e = assertThrows(CorruptStoreException.class,
                    () -> TableStore.open(Storage.open(d.reopen()), opts()).close(), "bit " + bit);
            assertTrue(e.getMessage().contains("damaged in a store closed cleanly"), e.getMessage());
        }
    }
}
