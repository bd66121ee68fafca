package org.htod.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.StorageMethod;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * One test per way damage used to pass unnoticed, each the exact damage that showed it on a store
 * of about 400 entries ({@link Workload}): the store must answer each question right or throw a
 * typed error, and what a damaged open or session writes must not destroy what the damage did not
 * touch (the damaged bytes put back, the store reads back whole).
 */
class IntegrityRegressionTest {
    private static final Map<Images.Kind, Images.Image> IMAGES = new HashMap<>();

    private static synchronized Images.Image image(Images.Kind kind) {
        return IMAGES.computeIfAbsent(kind, k -> Images.build(new Images.Spec(StorageMethod.TS, k, 512, 0x4E6_0000L)));
    }

    /** The first region of {@code structure} whose detail starts with {@code detail}. */
    static ImageMap.Region region(Images.Image img, String structure, String detail) {
        for (ImageMap.Region r : img.map().all(structure)) {
            if (r.structure().equals(structure) && r.detail().startsWith(detail)) {
                return r;
            }
        }
        throw new AssertionError("no " + structure + " of " + detail + " in " + (img.spec() == null ? "the image"
                : img.spec().name()));
    }

    static byte[] flip(byte[] image, long offset, int mask) {
        byte[] out = image.clone();
        out[(int) offset] ^= (byte) mask;
        return out;
    }

    /** Reads {@code damaged} whole: every answer right or a typed error. Returns the device after. */
    static MemoryDevice assertRightOrTyped(byte[] damaged, Images.Image img, String what) {
        MemoryDevice dev = Images.device(damaged);
        Verdict v = StoreCheck.run(dev, damaged, img.truth(), 1 << 20, new Verdict());
        assertFalse(v.failed(), what + ": " + v);
        return dev.reopen();
    }

    /** Puts {@code original}'s bytes back over {@code [from, to)} of {@code after}: the store must read back whole. */
    static void assertWholeWhenRepaired(byte[] original, byte[] after, long from, long to, Images.Image img, String what) {
        byte[] repaired = after.clone();
        System.arraycopy(original, (int) from, repaired, (int) from, (int) (to - from));
        assertWhole(repaired, img, what);
    }

    /**
     * Puts {@code original}'s bytes back over the regions named {@code structure} (a prefix, as
     * {@link ImageMap#all} takes it) that lie in {@code [from, to)}: the store must read back
     * whole. For damage spanning more than the structure: the rest of the range may be space the
     * session on the damaged store was free to use (a checkpoint it wrote into a freed block).
     *
     * <p>A region the session reused is left as the session left it: one whose bytes in {@code
     * after} are no longer those of {@code damaged} and where the store as the session left it
     * holds an entry. On an image left open, the log may hold a doubling the flusher committed
     * before the power went: the open replays it and frees the old bucket array without reading
     * it (the log holds its result), and a later install may put an entry there. Putting the old
     * array's bytes back would destroy that entry.
     */
    static void assertWholeWhenRepaired(byte[] original, byte[] damaged, byte[] after, long from, long to,
            String structure, Images.Image img, String what) {
        byte[] repaired = after.clone();
        ImageMap afterMap = ImageMap.of(after, img.truth());
        int inRange = 0;
        int restored = 0;
        for (ImageMap.Region r : img.map().all(structure)) {
            int a = (int) Math.max(from, r.start());
            int b = (int) Math.min(to, r.end());
            if (a < b) {
                inRange++;
                boolean reused = !java.util.Arrays.equals(after, a, b, damaged, a, b)
                        && afterMap.all("entry").stream().anyMatch(e -> e.start() < b && e.end() > a);
                if (!reused) {
                    System.arraycopy(original, a, repaired, a, b - a);
                    restored++;
                }
            }
        }
        assertTrue(inRange > 0, what + ": no " + structure + " in the damaged range");
        if (restored > 0) {
            assertWhole(repaired, img, what);
        }
    }

    private static void assertWhole(byte[] repaired, Images.Image img, String what) {
        Verdict v = StoreCheck.run(repaired, img.truth(), 1 << 20, new Verdict());
        assertTrue(!v.failed() && !v.refused() && v.typed == 0,
                what + ": with the damaged bytes put back, the store must read back whole, but: " + v);
    }

    @Test
    void mechanism1FlippedKeyIsAnErrorNotAnAbsentKey() {
        Images.Image img = image(Images.Kind.CLEAN);
        ImageMap.Region key = region(img, "entry.key", "pages");
        assertRightOrTyped(flip(img.bytes(), (key.start() + key.end()) / 2, 0x01), img, "a key byte flipped in " + key);
    }

    @Test
    void mechanism1FlippedKeyOfAnEntryOverAPageIsNotReturnedByKeySet() {
        Images.Image img = image(Images.Kind.CLEAN);
        ImageMap.Region key = region(img, "entry.key", "blobs");
        assertRightOrTyped(flip(img.bytes(), key.end() - 1, 0x20), img, "a key byte flipped in " + key);
    }

    @Test
    void mechanism1DamagedKeyLengthIsAnErrorNotACodecException() {
        // Long keys under values over a page: a key-only read of such an entry skipped the CRC.
        MemoryDevice dev = new MemoryDevice();
        Model truth = new Model();
        Model.MapModel<Long, byte[]> m = new Model.MapModel<>("longs", org.htod.Codec.longs(), org.htod.Codec.bytes());
        truth.maps.add(m);
        try (HtodStore s = Images.builder(dev).createIfMissing(true).logSize(1 << 20).open()) {
            HtodMap<Long, byte[]> map = s.map(m.name, m.keys, m.values);
            for (long k = 0; k < 50; k++) {
                byte[] v = new byte[5000];
                java.util.Arrays.fill(v, (byte) k);
                map.put(0x4C4F_4E47_0000_0000L + k, v);
                m.entries.put(m.keyBytes(0x4C4F_4E47_0000_0000L + k), Model.wrap(v));
            }
        }
        byte[] image = Images.bytes(dev.reopen());
        Images.Image img = new Images.Image(null, image, truth, ImageMap.of(image, truth));
        ImageMap.Region lengths = region(img, "entry.lengths", "longs");
        // keyLength 8 -> 7 (the low byte of bytes 40..43 of the entry): still inside the block
        assertRightOrTyped(flip(image, lengths.start() + 3, 0x0F), img, "key length damaged in " + lengths);
    }

    /** Holds today, through the entry CRC: a value is never returned other than it was written. */
    @Test
    void flippedValueIsAnErrorNotAnotherValue() {
        Images.Image img = image(Images.Kind.CLEAN);
        for (String map : new String[] {"pages", "blobs", "counts"}) {
            ImageMap.Region value = region(img, "entry.value", map);
            assertRightOrTyped(flip(img.bytes(), value.end() - 1, 0x04), img, "a value byte flipped in " + value);
        }
    }

    @Test
    void mechanism2DamagedHashIsAnErrorNotASkippedEntry() {
        Images.Image img = image(Images.Kind.CLEAN);
        ImageMap.Region hash = region(img, "entry.hash", "pages");
        assertRightOrTyped(flip(img.bytes(), hash.start() + 7, 0x10), img, "a hash byte flipped in " + hash);
    }

    @Test
    void mechanism2DamagedExpiryIsAnErrorNotADeadEntry() {
        Images.Image img = image(Images.Kind.CLEAN);
        for (ImageMap.Region r : img.map().all("entry.expiry")) {
            if (r.detail().startsWith("counts") && ByteBuffer.wrap(img.bytes()).getLong((int) r.start()) != 0) {
                // 0x0000018b_.... (2023) becomes 0x0000008b_.... (1989): a time to live of hours, passed
                assertRightOrTyped(flip(img.bytes(), r.start() + 2, 0x01), img, "expiry damaged in " + r);
                return;
            }
        }
        throw new AssertionError("no entry with a time to live in " + img.spec().name());
    }

    @Test
    void mechanism3ZeroedBucketSectorIsAnErrorNotVanishedKeys() {
        for (Images.Kind kind : new Images.Kind[] {Images.Kind.CLEAN, Images.Kind.OPEN_SYNCED}) {
            Images.Image img = image(kind);
            long sector = busiestSector(img, "pages");
            // The sector's bytes of the bucket array zeroed, not the other blocks it may share:
            // a session on an open image installs, frees and allocates, and may reuse their
            // space, which putting the original bytes back would then destroy.
            byte[] damaged = img.bytes().clone();
            for (ImageMap.Region r : img.map().all("bucket")) {
                long a = Math.max(sector, r.start());
                long b = Math.min(sector + 4096, r.end());
                if (a < b) {
                    java.util.Arrays.fill(damaged, (int) a, (int) b, (byte) 0);
                }
            }
            String what = kind + ": the bucket array of 'pages' zeroed in the 4 KiB sector at offset " + sector;
            byte[] after = Images.bytes(assertRightOrTyped(damaged, img, what));
            assertWholeWhenRepaired(img.bytes(), damaged, after, sector, sector + 4096, "bucket", img, what);
        }
    }

    /** The 4096-byte aligned sector holding the most used bucket slots of {@code map}. */
    static long busiestSector(Images.Image img, String map) {
        Map<Long, Integer> used = new HashMap<>();
        for (ImageMap.Region r : img.map().all("bucket.slot.used")) {
            if (r.detail().startsWith(map + " ")) {
                used.merge(r.start() / 4096 * 4096, 1, Integer::sum);
            }
        }
        return used.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }

    @Test
    void mechanism4DamagedCurrentTableHeaderSlotIsAnErrorNotAnOlderCount() {
        Images.Image img = image(Images.Kind.CLEAN);
        ImageMap.Region slot = region(img, "table.header.current", "pages");
        // a reserved byte, under the slot's CRC: the slot fails its check and the older one is left
        assertRightOrTyped(flip(img.bytes(), slot.start() + 100, 0x01), img, "a byte flipped in " + slot);
    }

    @Test
    void mechanism5DamagedCatalogEntryNeitherHidesNorReplacesTheMap() {
        Images.Image img = image(Images.Kind.CLEAN);
        ImageMap.Region name = region(img, "catalog.entry.key", "(catalog) \"pages\"");
        byte[] damaged = flip(img.bytes(), name.start() + 2, 0x01);
        String what = "a byte of the catalog entry of 'pages' flipped at offset " + (name.start() + 2);
        MemoryDevice dev = Images.device(damaged);
        List<String> wrong = new ArrayList<>();
        HtodStore s = null;
        try {
            s = Images.builder(dev).open();
            try {
                if (!s.mapNames().contains("pages")) {
                    wrong.add("mapNames() " + s.mapNames() + " lacks 'pages'");
                }
            } catch (HtodException typed) {
                // an error is a right answer to a damaged catalog
            }
            Model.MapModel<?, ?> pages = img.truth().map("pages");
            try {
                long size = s.map("pages", pages.keys, pages.values).size();
                if (size != pages.entries.size()) {
                    wrong.add("map(\"pages\") has " + size + " entries, the store holds " + pages.entries.size());
                }
            } catch (HtodException typed) {
                // likewise
            }
            s.sync(); // then the process dies: whatever this session wrote is on the device
        } catch (HtodException typed) {
            // a refused open, or a sync that refuses
        }
        assertTrue(wrong.isEmpty(), what + ": " + wrong);
        assertWholeWhenRepaired(img.bytes(), Images.bytes(dev.reopen()), name.start(), name.end(), img, what);
    }

    @Test
    void mechanism6DamagedSuperblockOfAnUncleanStoreIsAnErrorNotAnEmptyStore() {
        Images.Image img = image(Images.Kind.OPEN_SYNCED);
        ImageMap.Region sb = region(img, "superblock.current", "");
        byte[] damaged = flip(img.bytes(), sb.start() + 100, 0x01); // a reserved byte, under the CRC
        String what = "a byte flipped in " + sb + " of a store never closed cleanly";
        MemoryDevice after = assertRightOrTyped(damaged, img, what);
        assertWholeWhenRepaired(img.bytes(), Images.bytes(after), sb.start(), sb.end(), img, what);
    }

    @Test
    void refusedOpensOfDamagedStoresWriteNothing() {
        Images.Image img = image(Images.Kind.OPEN_SYNCED);
        ImageMap.Region slot = region(img, "bucket.slot.used", "pages");
        byte[] damaged = flip(img.bytes(), slot.start() + 1, 0x40); // a link to no block
        MemoryDevice dev = Images.device(damaged);
        Verdict v = StoreCheck.run(dev, damaged, img.truth(), 0, new Verdict());
        if (v.refused()) {
            assertArrayEquals(damaged, Images.bytes(dev.reopen()), "a refused open wrote: " + v.refusedWrote);
        }
        assertEquals(null, v.refusedWrote);
        assertFalse(v.failed(), v.toString());
    }
}
