package org.htod.core.log;

import java.nio.ByteBuffer;
import org.htod.core.CorruptStoreException;
import org.htod.core.device.BlockDevice;

/**
 * Reads the stream of a log region from a position on, record by record, until the first place
 * where no valid record lies (see {@link Records}): that is where the log ends. Reads the region
 * in large windows, never more than one lap from where it started, and checks each frame
 * ({@link Frames}) before it uses a byte of it: a frame this lap did not write (a torn or
 * unfinished write, or never written) ends the stream; a damaged one, or a device that ends
 * inside the region, is refused ({@link CorruptStoreException}).
 */
public final class LogReader {
    private static final int WINDOW = 1 << 20;

    private final BlockDevice dev;
    /** The device's size, asked once, not per frame (a system call each). */
    private long deviceSize = -1;
    private final long regionOffset;
    /** Stream bytes of one lap (see {@link Frames#lap}). */
    private final long regionSize;
    private final long from;
    private long pos;
    private long epoch;
    private ByteBuffer window = ByteBuffer.allocate(0);
    private long windowAt = -1;
    private long bytesRead;
    /** Why the stream ended, or null when {@link #stopFrame} says it (built when asked: see {@link #stopReason()}). */
    private String stopReason = "";
    /** The frame the stream ended at, and its device offset, when {@link #stopReason} is null. */
    private Frames.Frame stopFrame;
    private long stopOffset;
    private final boolean damageScan;
    /** The last frame checked: its stream position and what it is. */
    private long frameAt = -1;
    private Frames.Frame frame;
    /**
     * The furthest frame taken as written, and its epoch: a frame after it must be of that epoch
     * or later (one of an earlier epoch was left from before a crash, past the end recovery
     * found then). Frames are met in stream order; a record's bytes may be read again.
     */
    private long lastFrame = -1;
    private long lastFrameEpoch;
    /** The highest epoch of the frames checked so far, this lap's or not (see {@link #highestFrameEpoch}). */
    private long highestFrameEpoch;

    /**
     * A reader of the region {@code [regionOffset, regionOffset + regionBytes)} from position
     * {@code from}, accepting records of epoch {@code minEpoch} or later, that tells damage from a
     * torn tail (see {@link #next}).
     */
    public LogReader(BlockDevice dev, long regionOffset, long regionBytes, long from, long minEpoch) {
        this(dev, regionOffset, regionBytes, from, minEpoch, true);
    }

    /**
     * {@code damageScan} false: the stream simply ends at the first invalid record or frame, as
     * where no record can follow it (a store closed cleanly, whose last checkpoint is the log's
     * end).
     */
    public LogReader(BlockDevice dev, long regionOffset, long regionBytes, long from, long minEpoch,
            boolean damageScan) {
        this.damageScan = damageScan;
        this.dev = dev;
        this.regionOffset = regionOffset;
        this.regionSize = Frames.lap(regionBytes);
        this.from = from;
        this.pos = from;
        this.epoch = minEpoch;
    }

    /**
     * The next record (pads skipped), or null where the stream ends.
     *
     * @throws CorruptStoreException where the stream meets damage, not its torn tail: a damaged
     *     frame; an invalid record in frames written whole; or an invalid record after which a
     *     valid one was written by a later group commit, which began only once the invalid one's
     *     group was synced (see {@link Records})
     */
    public Records.Record next() {
        Records.Record r = read();
        if (r == null && damageScan && !stopReason().equals("a whole lap read")) {
            if (damaged) {
                throw new CorruptStoreException("the log of " + dev.name() + " is damaged at position " + pos + " (offset "
                        + Frames.byteOffset(regionOffset, regionSize, pos) + ": " + stopReason() + "): the records from"
                        + " there on may be acknowledged, so the store is not opened",
                        Frames.frameOffset(regionOffset, regionSize, pos));
            }
            String why = stopReason();
            refuseIfWrittenAfter(pos, why);
            stopReason = why; // the scan's reads say nothing of where the stream ends
        }
        return r;
    }

    /** Whether the stream ended at damage (see {@link #next}), not at a frame or byte never written. */
    private boolean damaged;

    /**
     * Looks, up to a lap from the start, for a valid record whose group commit began after
     * {@code bad}; throws if one is found. Reads at most the rest of the lap.
     */
    private void refuseIfWrittenAfter(long bad, String why) {
        long q = bad + Records.ALIGN;
        while (q < from + regionSize) {
            long rest = regionSize - q % regionSize;
            if (rest < Records.HEADER) {
                q += rest;
                continue;
            }
            ByteBuffer h = bytes(q, Records.HEADER);
            if (h == null) {
                // nothing of this lap there: on to the next frame
                q = Math.max(q + Records.ALIGN, Frames.frameStart(q) + Frames.PAYLOAD);
                continue;
            }
            int len = h.getInt(Records.LENGTH_OFFSET);
            if (h.getLong(Records.LSN_OFFSET) == q && len >= Records.HEADER && len % Records.ALIGN == 0 && len <= rest
                    && h.getLong(Records.EPOCH_OFFSET) >= epoch) {
                ByteBuffer r = bytes(q, len);
                if (r != null && Records.crc(r, 4, len) == r.getInt(Records.CRC_OFFSET)) {
                    if (Records.groupStart(r, q) > bad) {
                        throw new CorruptStoreException("the log of " + dev.name() + " is damaged at position " + bad
                                + " (offset " + Frames.byteOffset(regionOffset, regionSize, bad) + ": " + why
                                + "), yet the record"
                                + " at position " + q + " was written after it was made durable: the records between are"
                                + " lost, so the store is not opened", Frames.frameOffset(regionOffset, regionSize, bad));
                    }
                    q += len;
                    continue;
                }
            }
            q += Records.ALIGN;
        }
    }

    private Records.Record read() {
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
                return null; // bytes() said why
            }
            // From here on every byte read lies in frames this lap wrote whole: a record that
            // does not check out there was damaged after it was written.
            int len = h.getInt(Records.LENGTH_OFFSET);
            long lsn = h.getLong(Records.LSN_OFFSET);
            long e = h.getLong(Records.EPOCH_OFFSET);
            if (lsn != pos) {
                return damage("no record of position " + pos + " (found " + lsn + ")");
            }
            if (len < Records.HEADER || len % Records.ALIGN != 0 || len > rest) {
                return damage("a record length of " + len + " at position " + pos);
            }
            if (e < epoch) {
                return damage("a record of epoch " + e + " after epoch " + epoch + " at position " + pos);
            }
            ByteBuffer r = bytes(pos, len);
            if (r == null) {
                return null;
            }
            if (Records.crc(r, 4, len) != r.getInt(Records.CRC_OFFSET)) {
                return damage("a CRC32C mismatch at position " + pos);
            }
            int type = Byte.toUnsignedInt(r.get(Records.TYPE_OFFSET));
            int p = r.getInt(Records.PAYLOAD_LENGTH_OFFSET);
            if (p < 0 || Records.HEADER + (long) p > len) {
                return damage("a payload length of " + p + " at position " + pos);
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

    /** Device offset of the byte at stream position {@code p} (see docs/FORMAT.md, "Positions and laps"), for a report. */
    public long deviceOffset(long p) {
        return Frames.byteOffset(regionOffset, regionSize, p);
    }

    /** Epoch of the last record read (or the minimum given). */
    public long epoch() {
        return epoch;
    }

    /**
     * The highest epoch of any frame checked so far, whether this lap wrote it or not: once the
     * stream has ended and {@link #next} has looked past its end, every frame of the region. A
     * log that continues after a crash must write in a later epoch than this, not only than its
     * last record's: a heal raises the epoch with no record of it read back, and frames written in
     * it may lie past the end. Written again in the same epoch, a write that power loss tears
     * would leave them beside the new frames, taken for frames written whole.
     */
    public long highestFrameEpoch() {
        return highestFrameEpoch;
    }

    /** Bytes read from the device so far. */
    public long bytesRead() {
        return bytesRead;
    }

    /** Why the stream ended where it did, for reports. */
    public String stopReason() {
        if (stopReason == null) {
            stopReason = stopFrame.why() + " at offset " + stopOffset;
        }
        return stopReason;
    }

    private Records.Record damage(String why) {
        stopReason = why;
        damaged = true;
        return null;
    }

    /**
     * {@code n} bytes of the stream at position {@code p} (which do not cross the lap's end), or
     * null where the stream ends before {@code p + n}, with {@link #stopReason} saying why: a
     * frame this lap did not write, a frame written only partly, or damage ({@link #damaged}).
     */
    private ByteBuffer bytes(long p, int n) {
        ByteBuffer out = ByteBuffer.allocate(n);
        long q = p;
        while (out.hasRemaining()) {
            long fs = Frames.frameStart(q);
            ByteBuffer f = frame(fs);
            if (f == null) {
                return null;
            }
            int in = (int) (q - fs);
            int k = Math.min(frame.fill() - in, out.remaining());
            if (k <= 0) {
                stopReason = "nothing written at position " + q + " (its frame holds " + frame.fill() + " bytes)";
                return null;
            }
            out.put(f.duplicate().position(Frames.HEADER + in).limit(Frames.HEADER + in + k));
            q += k;
        }
        return out.flip();
    }

    /** Known all zero from this stream position to the region's end (once a look found it so), or -1. */
    private long zerosFrom = -1;
    /** Whether the zeros from {@link #zerosFrom} are where the log never reached (see {@link #neverWritten}). */
    private boolean zerosNeverWritten;
    /** A stream position of a frame that is not zero, found by a look; frames before it are not zeros to the end. */
    private long notZeroAt = -1;

    /**
     * Whether every frame from stream position {@code fs} to the end of the region (or of the
     * device) is all zero: then the log never reached there. A log's first lap begins at the
     * region's first frame and formats ahead of itself, so the region's unwritten part, while it
     * has one, runs to its end. Reads at most the rest of the region, once per reader.
     */
    private boolean zerosToTheEnd(long fs) {
        if (zerosFrom >= 0 && fs >= zerosFrom && fs - zerosFrom < regionSize) {
            return true;
        }
        if (notZeroAt >= 0 && fs < notZeroAt && notZeroAt - fs < regionSize) {
            return false;
        }
        long endPos = fs - fs % regionSize + regionSize; // the stream position of the region's end, this lap
        ByteBuffer b = ByteBuffer.allocate(WINDOW);
        for (long p = fs; p < endPos; ) {
            long off = Frames.frameOffset(regionOffset, regionSize, p);
            if (off >= deviceSize()) {
                break; // past the device's end: nothing written there
            }
            long frames = Math.min((endPos - p) / Frames.PAYLOAD, WINDOW / Frames.FRAME);
            b.clear().limit((int) Math.min(frames * Frames.FRAME, deviceSize() - off));
            dev.read(off, b);
            bytesRead += b.limit();
            int i = Frames.firstNonZero(b, 0, b.limit());
            if (i >= 0) {
                notZeroAt = p + (long) (i / Frames.FRAME) * Frames.PAYLOAD;
                return false;
            }
            p += frames * Frames.PAYLOAD;
        }
        zerosFrom = fs;
        zerosNeverWritten = fs % regionSize == 0 || blankBefore(fs);
        return true;
    }

    /**
     * Whether the zero frame of stream position {@code fs} lies where the log never reached: the
     * zeros run from it to the region's end, and the frame before the run is a blank one. The log
     * writes (and syncs) blank frames {@link FrameWriter#FORMAT_AHEAD} ahead of its end before any
     * record lands there, so by right a run of zeros never follows a frame with records; zeros
     * right after one are a zeroed sector that may have held acknowledged records, even at the
     * region's end. Decided once per run, by {@link #zerosToTheEnd} at the first of its frames met
     * (the reader meets frames in order); reads one frame more.
     */
    private boolean neverWritten(long fs) {
        return zerosToTheEnd(fs) && zerosNeverWritten;
    }

    /** Whether the frame before that of stream position {@code fs}, in the region, is a blank frame. */
    private boolean blankBefore(long fs) {
        long off = Frames.frameOffset(regionOffset, regionSize, fs) - Frames.FRAME;
        ByteBuffer f = ByteBuffer.allocate(Frames.FRAME);
        dev.read(off, f);
        bytesRead += Frames.FRAME;
        Frames.Frame before = Frames.classify(f, 0, fs - Frames.PAYLOAD);
        return before.kind() == Frames.Kind.NOT_WRITTEN && f.getLong(Frames.POSITION_OFFSET) == Frames.BLANK;
    }

    /** The device's size, asked on first use: the log region, at the device's start, does not move as a heap grows. */
    private long deviceSize() {
        if (deviceSize < 0) {
            deviceSize = dev.size();
        }
        return deviceSize;
    }

    /** The frame of stream position {@code fs} if this lap wrote it, checked once; else null, with why. */
    private ByteBuffer frame(long fs) {
        long off = Frames.frameOffset(regionOffset, regionSize, fs);
        if (off + Frames.FRAME > deviceSize()) {
            stopReason = "the device ends at offset " + deviceSize() + ", inside the log region";
            damaged = true;
            return null;
        }
        if (windowAt < 0 || off < windowAt || off + Frames.FRAME > windowAt + window.limit()) {
            long lapEnd = Frames.frameOffset(regionOffset, regionSize, 0) + regionSize / Frames.PAYLOAD * Frames.FRAME;
            int len = (int) Math.min(WINDOW, Math.min(lapEnd, deviceSize()) - off);
            // One buffer for every window: bytes() copies what it takes out of a frame at once.
            if (window.capacity() < len) {
                window = ByteBuffer.allocate(WINDOW);
            }
            window.clear().limit(len);
            dev.read(off, window);
            window.flip();
            windowAt = off;
            bytesRead += len;
        }
        int at = (int) (off - windowAt);
        if (frameAt != fs) {
            frame = Frames.classify(window, at, fs);
            frameAt = fs;
            if (frame.kind() != Frames.Kind.DAMAGED) {
                highestFrameEpoch = Math.max(highestFrameEpoch, frame.epoch());
            }
            if (frame.kind() == Frames.Kind.ZERO) {
                frame = neverWritten(fs) ? new Frames.Frame(Frames.Kind.NOT_WRITTEN, 0, 0, "zeros from here to the end"
                        + " of the lap (never written)") : new Frames.Frame(Frames.Kind.DAMAGED, 0, 0, "a zeroed frame"
                        + " before written ones, or after a frame of records");
            }
        }
        if (frame.kind() == Frames.Kind.DAMAGED) {
            stopReason = frame.why() + " at offset " + off;
            damaged = true;
            return null;
        }
        if (frame.kind() == Frames.Kind.NOT_WRITTEN) {
            stopReason = null; // said when asked: the scan past a torn tail meets a frame like this per 4 KiB
            stopFrame = frame;
            stopOffset = off;
            return null;
        }
        if (fs > lastFrame) {
            if (frame.epoch() < lastFrameEpoch) {
                stopReason = "a frame of epoch " + frame.epoch() + " after epoch " + lastFrameEpoch + " at offset " + off
                        + " (left from before a crash)";
                return null;
            }
            lastFrame = fs;
            lastFrameEpoch = frame.epoch();
        }
        return window.duplicate().position(at).limit(at + Frames.FRAME).slice();
    }
}
