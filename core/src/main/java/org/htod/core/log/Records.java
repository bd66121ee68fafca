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
 * 25  3  reserved   0
 * 28  4  payloadLength
 * 32  p  payload
 * 32+p   padding    0, up to the next multiple of 8
 * </pre>
 *
 * A record is valid where it lies if its CRC matches, its {@code lsn} is its position, its length
 * is plausible, and its epoch is not below the previous record's: a torn record, a record of an
 * earlier lap, and a record left over from before a crash (written in an earlier epoch past the
 * end that recovery found) all fail one of these, and the stream ends there.
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
    static final int PAYLOAD_LENGTH_OFFSET = 28;

    private Records() {}

    /** Bytes of a record carrying {@code payload} bytes. */
    static int length(int payload) {
        long n = (long) HEADER + payload;
        return (int) ((n + ALIGN - 1) / ALIGN * ALIGN);
    }

    static ByteBuffer encode(int type, long lsn, long epoch, ByteBuffer payload) {
        int p = payload.remaining();
        int len = length(p);
        ByteBuffer b = ByteBuffer.allocate(len);
        b.putInt(LENGTH_OFFSET, len);
        b.putLong(LSN_OFFSET, lsn);
        b.putLong(EPOCH_OFFSET, epoch);
        b.put(TYPE_OFFSET, (byte) type);
        b.putInt(PAYLOAD_LENGTH_OFFSET, p);
        b.put(HEADER, payload, payload.position(), p);
        b.putInt(CRC_OFFSET, crc(b, 4, len));
        return b;
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
