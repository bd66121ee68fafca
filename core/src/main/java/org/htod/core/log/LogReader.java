package org.htod.core.log;

import java.nio.ByteBuffer;
import org.htod.core.device.BlockDevice;

/**
 * Reads the stream of a log region from a position on, record by record, until the first place
 * where no valid record lies (see {@link Records}): that is where the log ends. Reads the region
 * in large windows; never reads past the device's end (unwritten bytes end the stream) nor more
 * than one lap from where it started.
 */
public final class LogReader {
    private static final int WINDOW = 1 << 20;

    private final BlockDevice dev;
    private final long regionOffset;
    private final long regionSize;
    private final long from;
    private long pos;
    private long epoch;
    private ByteBuffer window = ByteBuffer.allocate(0);
    private long windowAt = -1;
    private long bytesRead;
    private String stopReason = "";

    /** A reader from position {@code from}, accepting records of epoch {@code minEpoch} or later. */
    public LogReader(BlockDevice dev, long regionOffset, long regionSize, long from, long minEpoch) {
        this.dev = dev;
        this.regionOffset = regionOffset;
        this.regionSize = regionSize;
        this.from = from;
        this.pos = from;
        this.epoch = minEpoch;
    }

    /** The next record (pads skipped), or null where the stream ends. */
    public Records.Record next() {
        while (true) {
            if (pos - from >= regionSize) {
                stopReason = "a whole lap read";
                return null;
            }
            long rest = regionSize - pos % regionSize;
            if (rest < Records.HEADER) {
                pos += rest; // too few bytes for a record before the lap's end: the writer skipped them
                continue;
            }
            ByteBuffer h = bytes(pos, Records.HEADER);
            if (h == null) {
                stopReason = "the device ends";
                return null;
            }
            int len = h.getInt(Records.LENGTH_OFFSET);
            long lsn = h.getLong(Records.LSN_OFFSET);
            long e = h.getLong(Records.EPOCH_OFFSET);
            if (lsn != pos) {
                stopReason = "no record of position " + pos + " (found " + lsn + ")";
                return null;
            }
            if (len < Records.HEADER || len % Records.ALIGN != 0 || len > rest) {
                stopReason = "a record length of " + len + " at position " + pos;
                return null;
            }
            if (e < epoch) {
                stopReason = "a record of epoch " + e + " after epoch " + epoch + " at position " + pos;
                return null;
            }
            ByteBuffer r = bytes(pos, len);
            if (r == null || Records.crc(r, 4, len) != r.getInt(Records.CRC_OFFSET)) {
                stopReason = r == null ? "the device ends" : "a CRC32C mismatch at position " + pos;
                return null;
            }
            int type = Byte.toUnsignedInt(r.get(Records.TYPE_OFFSET));
            int p = r.getInt(Records.PAYLOAD_LENGTH_OFFSET);
            if (p < 0 || Records.HEADER + (long) p > len) {
                stopReason = "a payload length of " + p + " at position " + pos;
                return null;
            }
            epoch = e;
            long at = pos;
            pos += len;
            if (type == Records.PAD) {
                continue;
            }
            ByteBuffer payload = r.duplicate().position(Records.HEADER).limit(Records.HEADER + p).slice();
            return new Records.Record(at, e, type, payload, len);
        }
    }

    /** Where the stream ends (the position after the last valid record), once {@link #next} returned null. */
    public long position() {
        return pos;
    }

    /** Epoch of the last record read (or the minimum given). */
    public long epoch() {
        return epoch;
    }

    /** Bytes read from the device so far. */
    public long bytesRead() {
        return bytesRead;
    }

    /** Why the stream ended where it did, for reports. */
    public String stopReason() {
        return stopReason;
    }

    /** {@code n} bytes of the stream at position {@code p} (which do not cross the lap's end), or null past the device. */
    private ByteBuffer bytes(long p, int n) {
        long off = regionOffset + p % regionSize;
        if (off + n > dev.size()) {
            return null;
        }
        if (windowAt < 0 || off < windowAt || off + n > windowAt + window.limit()) {
            long lapEnd = regionOffset + regionSize;
            int len = (int) Math.min(Math.max(WINDOW, n), Math.min(lapEnd, dev.size()) - off);
            window = ByteBuffer.allocate(len);
            dev.read(off, window);
            window.flip();
            windowAt = off;
            bytesRead += len;
        }
        int at = (int) (off - windowAt);
        return window.duplicate().position(at).limit(at + n).slice();
    }
}
