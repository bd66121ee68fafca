package org.htod.table;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * A link on disk: an 8-byte handle (a bucket slot, or an entry's {@code next}) followed by a
 * 4-byte check, rewritten together by one aligned 12-byte write that never straddles a sector.
 * The check is the CRC32C of the handle and a salt that ties the link to its place: the bucket
 * index for a slot, the entry's head CRC for {@code next}. A zeroed or torn sector, or a link
 * written to another place, fails its check instead of cutting a chain short in silence.
 */
final class Links {
    /** Bytes of a link write: the handle and its check. */
    static final int SIZE = 12;

    private Links() {}

    static int check(long value, long salt) {
        CRC32C c = new CRC32C();
        ByteBuffer b = ByteBuffer.allocate(16).putLong(0, value).putLong(8, salt);
        c.update(b);
        return (int) c.getValue();
    }

    /** The 12 bytes of a link write. */
    static ByteBuffer encode(long value, long salt) {
        return ByteBuffer.allocate(SIZE).putLong(0, value).putInt(8, check(value, salt));
    }
}
