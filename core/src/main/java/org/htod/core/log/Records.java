package org.htod.core.log;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The framing of a log record. Numbers big-endian; every record starts at a multiple of 8 in the
 * stream and its length is a multiple of 8.
 *
 * <pre>
 *  0  4  crc32c     CRC32C of bytes 4 .. length-1
 *  4  4  length     bytes of the whole record, header and padding included
 *  8  8  lsn        position of this record in the stream
 * 16  8  epoch      the opening (or, after a failed write, the restart) that wrote it
 * 24  1  type       {@link #PAD}, or a type of the layer above
 * 25  3  group      (lsn - the durable end of the log when its write began) / 8, at most 2^24-1
 * 28  4  payloadLength
 * 32  p  payload
 * 32+p   padding    0, up to the next multiple of 8
 * </pre>
 *
 * A record is valid where it lies if its CRC matches, its {@code lsn} is its position, its length
 * is plausible, and its epoch is not below the previous record's: a torn record, a record of an
 * earlier lap, and a record left over from before a crash (written in an earlier epoch past the
 * end that recovery found) all fail one of these, and the stream ends there.
 *
 * <p>The {@code group} field tells damage from a torn tail: it says where the log was durable
 * when the record's write began, so a valid record whose write began when an invalid one was
 * durable already proves that the invalid one is damaged, not torn (see {@link LogReader}). The
 * writer of the records fills it, and the CRC after it, when it takes them ({@link #seal}).
 */
public final class Records {
    public static final int HEADER = 32;
    public static final int ALIGN = 8;
    /** Fills the rest of a lap; skipped by readers. */
    public static final int PAD = 0;
    /** Smallest log region the log works with. */
    static final int MIN_REGION = 4096;

    static final int CRC_OFFSET = 0;
    static final int LENGTH_OFFSET = 4;
    static final int LSN_OFFSET = 8;
    static final int EPOCH_OFFSET = 16;
    static final int TYPE_OFFSET = 24;
    static final int GROUP_OFFSET = 25;
    static final int MAX_GROUP = 0xFF_FFFF;
    static final int PAYLOAD_LENGTH_OFFSET = 28;

    private Records() {}

    /** Bytes of a record carrying {@code payload} bytes. */
    static int length(int payload) {
        long n = (long) HEADER + payload;
        return (int) ((n + ALIGN - 1) / ALIGN * ALIGN);
    }

    static ByteBuffer encode(int type, long lsn, long epoch, ByteBuffer payload) {
        ByteBuffer b = ByteBuffer.allocate(length(payload.remaining()));
        encodeInto(b, type, lsn, epoch, payload);
        return b.flip();
    }

    /**
     * Writes the record carrying {@code payload} at {@code dst}'s position, which it advances by
     * the record's length (alignment bytes zeroed); {@code dst} must have that much room. The
     * group and the CRC wait for {@link #seal}. Writing in place saves the log a copy of each
     * record.
     */
    static void encodeInto(ByteBuffer dst, int type, long lsn, long epoch, ByteBuffer payload) {
        int p = payload.remaining();
        int len = length(p);
        int o = dst.position();
        dst.putInt(o + CRC_OFFSET, 0);
        dst.putInt(o + LENGTH_OFFSET, len);
        dst.putLong(o + LSN_OFFSET, lsn);
        dst.putLong(o + EPOCH_OFFSET, epoch);
        dst.put(o + TYPE_OFFSET, (byte) type);
        dst.put(o + GROUP_OFFSET, (byte) 0).put(o + GROUP_OFFSET + 1, (byte) 0).put(o + GROUP_OFFSET + 2, (byte) 0);
        dst.putInt(o + PAYLOAD_LENGTH_OFFSET, p);
        dst.put(o + HEADER, payload, payload.position(), p);
        for (int i = o + HEADER + p; i < o + len; i++) {
            dst.put(i, (byte) 0);
        }
        dst.position(o + len);
    }

    /**
     * Fills the group field and the CRC of every record in {@code batch} (from its position 0 to
     * its limit), whose first byte lies at stream position {@code from}, written while the log is
     * durable up to {@code durable}; {@code regionSize} locates the unheaded pads at a lap's end.
     */
    static void seal(ByteBuffer batch, long from, long durable, long regionSize) {
        int o = 0;
        long p = from;
        while (o < batch.limit()) {
            long rest = regionSize - p % regionSize;
            if (rest < HEADER) {
                o += (int) rest;
                p += rest;
                continue;
            }
            int len = batch.getInt(o + LENGTH_OFFSET);
            int group = (int) Math.min((p - durable) / ALIGN, MAX_GROUP);
            batch.put(o + GROUP_OFFSET, (byte) (group >>> 16)).put(o + GROUP_OFFSET + 1, (byte) (group >>> 8))
                    .put(o + GROUP_OFFSET + 2, (byte) group);
            batch.putInt(o + CRC_OFFSET, crc(batch, o + 4, o + len));
            o += len;
            p += len;
        }
    }

    /** Where the log was durable when the record at {@code lsn} was written, at the latest. */
    static long groupStart(ByteBuffer record, long lsn) {
        int g = (Byte.toUnsignedInt(record.get(GROUP_OFFSET)) << 16) | (Byte.toUnsignedInt(record.get(GROUP_OFFSET + 1)) << 8)
                | Byte.toUnsignedInt(record.get(GROUP_OFFSET + 2));
        // A group beyond the field's reach may have begun anywhere before: taken as at the very
        // start, so that a tear in it is never taken for damage.
        return g == MAX_GROUP ? Long.MIN_VALUE : lsn - (long) g * ALIGN;
    }

    static int crc(ByteBuffer b, int from, int to) {
        CRC32C c = new CRC32C();
        ByteBuffer d = b.duplicate();
        d.limit(to).position(from);
        c.update(d);
        return (int) c.getValue();
    }

    /** One record as read back. */
    public record Record(long lsn, long epoch, int type, ByteBuffer payload, int length) {
        /** Position of the record after this one. */
        public long next() {
            return lsn + length;
        }
    }
}
