package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Keeps the worked example in {@code docs/FORMAT.md} true: the hex dump between its markers must
 * be exactly the first 192 bytes of slot A of a store created with default settings on a 512-byte
 * sector device without a fixed capacity, store id 0x0123456789abcdef, created at
 * 2025-01-01T00:00:00Z.
 */
class FormatExampleTest {
    static final long STORE_ID = 0x0123456789abcdefL;
    static final long CREATED_MILLIS = 1_735_689_600_000L;
    private static final String BEGIN = "<!-- superblock-hexdump:begin -->";
    private static final String END = "<!-- superblock-hexdump:end -->";

    @Test
    void formatDocumentShowsTheBytesThisCodeWrites() throws IOException {
        MemoryDevice dev = new MemoryDevice();
        Container.create(dev, ContainerConfig.defaults(), STORE_ID, CREATED_MILLIS);
        String actual = hexDump(Slots.bytes(dev, Slots.A, Superblock.RECORD_LENGTH));

        Path doc = Path.of("..", "docs", "FORMAT.md");
        assertTrue(Files.exists(doc), "missing " + doc.toAbsolutePath());
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        assertTrue(begin >= 0 && end > begin, "markers " + BEGIN + " and " + END + " not found in " + doc);
        String block = text.substring(begin + BEGIN.length(), end).replace("```text", "").replace("```", "").strip();
        assertEquals(actual, block, "docs/FORMAT.md hex dump is stale; the bytes written now are:\n" + actual);
    }

    /** Sixteen bytes a line: offset, hex in two groups of eight, printable ASCII. */
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
