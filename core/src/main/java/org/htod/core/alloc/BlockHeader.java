package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The 48-byte header at the start of every heap block, for all three storage methods.
 *
 * <pre>
 *  0   4  code       CODE ^ (int) storeId: code bytes (paper Fig. 7); another store's
 *                    or a previous program's bytes almost never match
 *  4   2  listId     PL/PFL: the disk list this block was linked into; 0xFFFF for none
 *  6   2  reserved   0
 *  8   8  size       block size in bytes, header included, a multiple of the grain
 * 16   8  stamp      creation stamp: when this extent was carved, split or coalesced
 * 24   4  remainder  grains of the free block split off right behind this one by the
 *                    split that created it (0: none); lets recovery rebuild a lost header
 * 28   4  crc32c     of bytes 0..27: the immutable part
 * ---- mutable part, rewritten alone by alloc and free ----
 * 32   8  next       PL/PFL: next block on the disk list (absolute offset), 0 at the end
 * 40   1  status     ALLOCATED or FREE (two code values, anything else is invalid)
 * 41   3  reserved   0
 * 44   4  length     payload bytes in use (allocated blocks)
 * 48      payload
 * </pre>
 *
 * <p>The immutable part describes the extent and changes only when the extent does (carve,
 * split, coalesce); it is written whole, within one sector, with its checksum. The mutable
 * part is what a TS free (one byte), a PL/PFL push (status and next) or an allocation from a
 * free list (status, length, payload: bytes 40.. on) rewrites: one contiguous write each, with
 * no read; the order of the fields is chosen so that each of these is one range. Its fields
 * are each inside one sector and validated by value (status codes, length bound, next
 * pointing at a valid header), which is why they sit outside the checksum.
 *
 * <p>Blocks start at grain multiples and the grain is a multiple of 64, so a header never
 * straddles a sector of 64 bytes or more: a torn write leaves it old or new, never mixed.
 */
final class BlockHeader {
    static final int SIZE = 48;

    static final int CODE_OFFSET = 0;
    static final int LIST_ID_OFFSET = 4;
    static final int BLOCK_SIZE_OFFSET = 8;
    static final int STAMP_OFFSET = 16;
    static final int REMAINDER_OFFSET = 24;
    static final int CRC_OFFSET = 28;
    static final int NEXT_OFFSET = 32;
    static final int STATUS_OFFSET = 40;
    static final int LENGTH_OFFSET = 44;

    static final int CODE = 0x48424C4B; // "HBLK"
    static final byte ALLOCATED = (byte) 0xA1;
    static final byte FREE = (byte) 0xF4;
    static final int NO_LIST = 0xFFFF;

    final long size;
    final long stamp;
    final long remainder;
    final int listId;
    final boolean allocated;
    final int length;
    final long next;

    BlockHeader(long size, long stamp, long remainder, int listId, boolean allocated, int length, long next) {
        this.size = size;
        this.stamp = stamp;
        this.remainder = remainder;
        this.listId = listId;
        this.allocated = allocated;
        this.length = length;
        this.next = next;
    }

    /** Writes the whole header at the buffer's position (absolute puts; position unchanged). */
    static void put(ByteBuffer buf, int at, int code, long size, long stamp, long remainder, int listId,
            boolean allocated, int length, long next, int grain) {
        buf.putInt(at + CODE_OFFSET, code);
        buf.putShort(at + LIST_ID_OFFSET, (short) listId);
        buf.putShort(at + LIST_ID_OFFSET + 2, (short) 0);
        buf.putLong(at + BLOCK_SIZE_OFFSET, size);
        buf.putLong(at + STAMP_OFFSET, stamp);
        buf.putInt(at + REMAINDER_OFFSET, Math.toIntExact(remainder / grain));
        buf.putInt(at + CRC_OFFSET, crc(buf, at));
        buf.putLong(at + NEXT_OFFSET, next);
        putStatus(buf, at + STATUS_OFFSET, allocated, length);
    }

    /** Writes the 8 bytes of status and length at {@code at} (which is a block's offset 40). */
    static void putStatus(ByteBuffer buf, int at, boolean allocated, int length) {
        buf.put(at, allocated ? ALLOCATED : FREE);
        buf.put(at + 1, (byte) 0);
        buf.putShort(at + 2, (short) 0);
        buf.putInt(at + LENGTH_OFFSET - STATUS_OFFSET, length);
    }

    static int crc(ByteBuffer buf, int at) {
        CRC32C crc = new CRC32C();
        ByteBuffer dup = buf.duplicate();
        dup.limit(at + CRC_OFFSET).position(at);
        crc.update(dup);
        return (int) crc.getValue();
    }

    /**
     * Decodes the header at {@code at}, or returns null when it is not a valid header of this
     * store: wrong code bytes, checksum, status value, or sizes that cannot be.
     */
    static BlockHeader decode(ByteBuffer buf, int at, int code, int grain) {
        if (buf.getInt(at + CODE_OFFSET) != code || buf.getInt(at + CRC_OFFSET) != crc(buf, at)) {
            return null;
        }
        byte status = buf.get(at + STATUS_OFFSET);
        if (status != ALLOCATED && status != FREE) {
            return null;
        }
        long size = buf.getLong(at + BLOCK_SIZE_OFFSET);
        int length = buf.getInt(at + LENGTH_OFFSET);
        long remainder = Integer.toUnsignedLong(buf.getInt(at + REMAINDER_OFFSET)) * grain;
        if (size < grain || size % grain != 0 || length < 0 || length > size - SIZE) {
            return null;
        }
        return new BlockHeader(size, buf.getLong(at + STAMP_OFFSET), remainder,
                Short.toUnsignedInt(buf.getShort(at + LIST_ID_OFFSET)), status == ALLOCATED, length,
                buf.getLong(at + NEXT_OFFSET));
    }

    static int codeFor(long storeId) {
        return CODE ^ (int) storeId ^ (int) (storeId >>> 32);
    }
}
