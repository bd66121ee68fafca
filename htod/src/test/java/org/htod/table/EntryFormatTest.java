package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Keeps the entry example of {@code docs/FORMAT.md} true, and pins the layout: offsets, every byte
 * covered by one of the three checks, and the hash of a known key.
 */
class EntryFormatTest {
    private static final String BEGIN = "<!-- entry-hexdump:begin -->";
    private static final String END = "<!-- entry-hexdump:end -->";

    /** The example's table: version 2, hash key bytes 00..0f (the SipHash paper's). */
    private static final TableHash EXAMPLE_HASH = TableHash.keyed(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);

    private static byte[] example() {
        byte[] k = "k".getBytes(StandardCharsets.UTF_8);
        byte[] v = "v".getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = Entries.encode(0, 0x0102030405060708L, EXAMPLE_HASH.hash(k), 1, 0, k, v);
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Test
    void formatDocumentShowsTheBytesThisCodeWrites() throws IOException {
        String actual = hexDump(example());
        Path doc = Path.of("..", "docs", "FORMAT.md");
        assertTrue(Files.exists(doc), "missing " + doc.toAbsolutePath());
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        assertTrue(begin >= 0 && end > begin, "markers not found in " + doc);
        String block = text.substring(begin + BEGIN.length(), end).replace("```text", "").replace("```", "").strip();
        assertEquals(actual, block, "docs/FORMAT.md entry hex dump is stale; the bytes written now are:\n" + actual);
    }

    @Test
    void everyByteIsCoveredByOneCheck() {
        byte[] e = example();
        assertEquals(66, e.length);
        ByteBuffer b = ByteBuffer.wrap(e);
        Entries.Head h = Entries.head(b, 1, EntryFormatTest::fail);
        Entries.checkNext(b, 1, EntryFormatTest::fail);
        Entries.checkValue(b, Entries.KEY_OFFSET + h.keyLength, h, 1, EntryFormatTest::fail);
        for (int i = 0; i < e.length; i++) {
            if (i >= 60 && i < Entries.KEY_OFFSET) {
                continue; // reserved
            }
            ByteBuffer c = ByteBuffer.wrap(e.clone());
            c.put(i, (byte) (c.get(i) ^ 1));
            boolean caught;
            try {
                Entries.Head hc = Entries.head(c, 1, EntryFormatTest::fail);
                Entries.checkNext(c, 1, EntryFormatTest::fail);
                Entries.checkValue(c, Entries.KEY_OFFSET + hc.keyLength, hc, 1, EntryFormatTest::fail);
                caught = false;
            } catch (org.htod.core.CorruptStoreException x) {
                caught = true;
            }
            assertTrue(caught, "a flip of byte " + i + " is caught");
        }
        // a link rewrite (next and its check, 12 bytes) keeps the entry valid
        ByteBuffer d = ByteBuffer.wrap(e.clone());
        d.put(Entries.NEXT_OFFSET, Links.encode(0x7777_0000_0000_0001L, d.getInt(Entries.HEAD_CRC_OFFSET)), 0, Links.SIZE);
        Entries.head(d, 1, EntryFormatTest::fail);
        Entries.checkNext(d, 1, EntryFormatTest::fail);
    }

    private static org.htod.core.CorruptStoreException fail(long handle, String expected, String found) {
        return new org.htod.core.CorruptStoreException("expected " + expected + ", found " + found, handle);
    }

    @Test
    void hashIsStable() {
        // Part of the format: buckets are chosen by it. Changing it needs a new format version.
        // Version 1's, from an independent implementation of MurmurHash64A and fmix64; version 2's
        // of the worked example, from an independent SipHash-2-4.
        assertEquals(0xc4cef2d4cc88134bL, EXAMPLE_HASH.hash("k".getBytes(StandardCharsets.UTF_8)));
        assertEquals(0x56b9ca5c942a0bb3L, TableHash.FIXED_SEED.hash("k".getBytes(StandardCharsets.UTF_8)));
        assertEquals(0x56b9ca5c942a0bb3L, Hashing.hash("k".getBytes(StandardCharsets.UTF_8)));
        assertEquals(0xfb2a37db3342c7ecL, Hashing.hash("hello world!".getBytes(StandardCharsets.UTF_8)));
        assertEquals(0x7ac2d96dc8d10583L, Hashing.hash(new byte[0]));
    }

    /**
     * The hash reads a key's words with one 8-byte load each: it must equal the same function
     * reading them a byte at a time, for keys of every length over several words.
     */
    @Test
    void hashReadsWordsAsLittleEndianBytes() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(0x4ea5_0001L);
        for (int len = 0; len <= 200; len++) {
            for (int n = 0; n < 20; n++) {
                byte[] k = new byte[len];
                r.nextBytes(k);
                assertEquals(bytewiseHash(k), Hashing.hash(k), "key of " + len + " bytes: " + hexDump(k));
            }
        }
    }

    /** MurmurHash64A with {@link Hashing#SEED} and fmix64, each word assembled byte by byte. */
    private static long bytewiseHash(byte[] key) {
        long m = 0xc6a4a7935bd1e995L;
        long h = Hashing.SEED ^ (key.length * m);
        int words = key.length >>> 3;
        for (int i = 0; i < words; i++) {
            long k = 0;
            for (int b = 7; b >= 0; b--) {
                k = (k << 8) | (key[8 * i + b] & 0xffL);
            }
            k *= m;
            k ^= k >>> 47;
            k *= m;
            h ^= k;
            h *= m;
        }
        int rest = key.length & 7;
        if (rest > 0) {
            for (int i = rest - 1; i >= 0; i--) {
                h ^= (key[8 * words + i] & 0xffL) << (8 * i);
            }
            h *= m;
        }
        h ^= h >>> 47;
        h *= m;
        h ^= h >>> 47;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    static String hexDump(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (int line = 0; line < bytes.length; line += 16) {
            sb.append(String.format("%08x ", line));
            StringBuilder ascii = new StringBuilder();
            for (int i = line; i < line + 16; i++) {
                if (i % 16 == 8) {
                    sb.append(' ');
                }
                if (i < bytes.length) {
                    int v = Byte.toUnsignedInt(bytes[i]);
                    sb.append(String.format(" %02x", v));
                    ascii.append(v >= 0x20 && v < 0x7f ? (char) v : '.');
                } else {
                    sb.append("   ");
                }
            }
            sb.append("  |").append(ascii).append("|\n");
        }
        return sb.toString().strip();
    }
}
