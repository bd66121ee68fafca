package org.htod.core.log;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The log region on the device: frames of {@value #FRAME} bytes, each a header and {@value
 * #PAYLOAD} bytes of the record stream. Numbers big-endian.
 *
 * <pre>
 *  0  4  crc32c    CRC32C of bytes 4 .. 511
 *  4  2  fill      payload bytes written, 0 .. 488; the rest of the payload is zero
 *  6  2  0
 *  8  8  position  stream position of the frame's first payload byte; -1 in a blank frame
 * 16  8  epoch     the epoch of the write that wrote the frame
 * 24 488 payload
 * </pre>
 *
 * <p>Why frames: a write that power loss tears keeps each sector whole, old or new (512 bytes is
 * the smallest sector a device writes atomically, so a frame never straddles two). Every frame is
 * therefore, after any crash, either one this lap wrote (its CRC matches and it names the position
 * where it lies), or one it did not reach (its CRC matches and it names another position: an
 * earlier lap's frame, or a blank one). A frame that is neither was damaged after it was written.
 * So damage in the log's last durable write, which record CRCs alone take for a torn tail, is
 * told from a tear, and the open is refused instead of dropping acknowledged records. A region is
 * zero where no log has reached yet; the log keeps blank frames written (and synced) ahead of its
 * end until it has gone round once ({@link Log#prepare}), so that zeros lie only after everything
 * ever written: a zero frame with anything but zeros after it in the lap is a zeroed sector,
 * damage too.
 */
final class Frames {
    static final int FRAME = 512;
    static final int HEADER = 24;
    static final int PAYLOAD = FRAME - HEADER;
    static final long BLANK = -1;

    static final int CRC_OFFSET = 0;
    static final int FILL_OFFSET = 4;
    static final int POSITION_OFFSET = 8;
    static final int EPOCH_OFFSET = 16;

    /**
     * What a frame read back is: written by this lap at this position, not, damaged, or all zero
     * (never written if nothing but zeros follows it in the lap, else damaged: see {@link Log#prepare}).
     */
    enum Kind { WRITTEN, NOT_WRITTEN, DAMAGED, ZERO }

    /**
     * A frame read back: its kind, payload bytes written, epoch, and in words ({@link #why()}) why
     * it is not written or damaged: {@code reason}, or, when null, a frame of stream position
     * {@code found} where {@code expected} was (an earlier lap's), put in words only when asked: a
     * reader meets thousands of those in a lap and reports one.
     */
    record Frame(Kind kind, int fill, long epoch, String reason, long found, long expected) {
        Frame(Kind kind, int fill, long epoch, String why) {
            this(kind, fill, epoch, why, 0, 0);
        }

        String why() {
            return reason != null ? reason : "a frame of position " + found + ", not " + expected + " (an earlier lap's)";
        }
    }

    private Frames() {}

    /** Stream bytes one lap of a region of {@code regionBytes} device bytes holds. */
    static long lap(long regionBytes) {
        return regionBytes / FRAME * PAYLOAD;
    }

    /** Stream position of the first payload byte of the frame holding position {@code p}. */
    static long frameStart(long p) {
        return p - p % PAYLOAD;
    }

    /** Device offset of the frame holding stream position {@code p}. */
    static long frameOffset(long regionOffset, long lap, long p) {
        return regionOffset + (p % lap) / PAYLOAD * FRAME;
    }

    /** Device offset of the byte at stream position {@code p}. */
    static long byteOffset(long regionOffset, long lap, long p) {
        return frameOffset(regionOffset, lap, p) + HEADER + p % PAYLOAD;
    }

    /**
     * Writes a frame at {@code dst}'s position {@code at}: for stream position {@code position}
     * ({@link #BLANK} for a blank frame), written in {@code epoch}, its payload the {@code fill}
     * bytes of {@code payload} from {@code from}. {@code dst} is a heap buffer, as every frame
     * buffer of the log is.
     */
    static void encode(ByteBuffer dst, int at, long position, long epoch, ByteBuffer payload, int from, int fill) {
        int base = dst.arrayOffset() + at;
        Arrays.fill(dst.array(), base, base + FRAME, (byte) 0); // a buffer used again holds an older frame
        dst.putShort(at + FILL_OFFSET, (short) fill);
        dst.putLong(at + POSITION_OFFSET, position);
        dst.putLong(at + EPOCH_OFFSET, epoch);
        dst.put(at + HEADER, payload, from, fill);
        dst.putInt(at + CRC_OFFSET, Records.crc(dst, at + 4, at + FRAME));
    }

    /** The index of the first byte of {@code b} in {@code [from, to)} that is not zero, or -1. */
    static int firstNonZero(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b.get(i) != 0) {
                return i;
            }
        }
        return -1;
    }

    static boolean allZero(ByteBuffer b, int from, int to) {
        return firstNonZero(b, from, to) < 0;
    }

    /**
     * The frame in {@code b} (its {@value #FRAME} bytes from position {@code at}), expected to
     * hold stream position {@code expected}. Whether its epoch may follow the frames before it is
     * the reader's to judge.
     */
    static Frame classify(ByteBuffer b, int at, long expected) {
        if (Records.crc(b, at + 4, at + FRAME) != b.getInt(at + CRC_OFFSET)) {
            return allZero(b, at, at + FRAME) ? new Frame(Kind.ZERO, 0, 0, "a zero frame")
                    : new Frame(Kind.DAMAGED, 0, 0, "a frame whose CRC32C does not match");
        }
        int fill = Short.toUnsignedInt(b.getShort(at + FILL_OFFSET));
        long position = b.getLong(at + POSITION_OFFSET);
        long epoch = b.getLong(at + EPOCH_OFFSET);
        if (fill > PAYLOAD || b.getShort(at + 6) != 0) {
            return new Frame(Kind.DAMAGED, 0, 0, "a frame with a fill of " + fill);
        }
        if (position != expected) {
            return new Frame(Kind.NOT_WRITTEN, 0, epoch, position == BLANK ? "a blank frame" : null, position, expected);
        }
        return new Frame(Kind.WRITTEN, fill, epoch, "");
    }
}
