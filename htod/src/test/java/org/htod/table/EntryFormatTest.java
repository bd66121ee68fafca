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
 * Keeps the entry example of {@code docs/FORMAT.md} true, and pins the layout: offsets, the CRC
 * range (everything but {@code next}), and the hash of a known key.
 */
class EntryFormatTest {
    private static final String BEGIN = "<!-- entry-hexdump:begin -->";
    private static final String END = "<!-- entry-hexdump:end -->";

    private static byte[] example() {
        byte[] k = "k".getBytes(StandardCharsets.UTF_8);
        byte[] v = "v".getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = Entries.encode(0, 0x0102030405060708L, Hashing.hash(k), 1, 0, k, v);
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
    void nextIsOutsideTheChecksumAndEverythingElseInside() {
        byte[] e = example();
        assertEquals(54, e.length);
        ByteBuffer b = ByteBuffer.wrap(e);
        int crc = b.getInt(e.length - 4);
        b.putLong(Entries.NEXT_OFFSET, 0x7777_0000_0000_0001L);
        assertEquals(crc, Entries.crc(b, e.length - 4), "rewriting next keeps the entry valid");
        for (int i = Entries.TABLE_ID_OFFSET; i < e.length - 4; i++) {
            ByteBuffer c = ByteBuffer.wrap(e.clone());
            c.put(i, (byte) (c.get(i) ^ 1));
            assertTrue(Entries.crc(c, e.length - 4) != crc, "byte " + i + " is covered");
        }
    }

    @Test
    void hashIsStable() {
        // Part of the format: buckets are chosen by it. Changing it needs a new format version.
        // Expected values from an independent implementation of MurmurHash64A and fmix64.
        assertEquals(0x56b9ca5c942a0bb3L, Hashing.hash("k".getBytes(StandardCharsets.UTF_8)));
        assertEquals(0xfb2a37db3342c7ecL, Hashing.hash("hello world!".getBytes(StandardCharsets.UTF_8)));
        assertEquals(0x7ac2d96dc8d10583L, Hashing.hash(new byte[0]));
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
