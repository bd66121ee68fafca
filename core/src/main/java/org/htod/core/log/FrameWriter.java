package org.htod.core.log;

import java.nio.ByteBuffer;
import java.util.function.LongSupplier;
import org.htod.core.device.BlockDevice;

/**
 * The log region on the device, as the log's leader writes it: records go out in frames ({@link
 * Frames}), a write that begins in the middle of a frame writes that frame's earlier bytes again
 * (kept in {@link #tail}), blank frames are written ahead of the end while the region's first lap
 * is still zero, and after a failed write the range it may have reached is overwritten.
 *
 * <p>Not thread-safe: one thread at a time uses it, the one holding the log's leadership (a
 * group commit's leader, a write-ahead, a heal, or the opening's {@link #prepare}). Nothing here
 * takes the log's monitor but {@link #startNow}, read when formatting ahead.
 */
final class FrameWriter {
    private final BlockDevice dev;
    private final long regionOffset;
    /** Device bytes of the region. */
    private final long regionBytes;
    /** Stream bytes of one lap of the region. */
    private final long regionSize;
    /** The log's start now (the oldest position a checkpoint still needs): formatting ahead never goes a lap past it. */
    private final LongSupplier startNow;
    /**
     * The stream bytes of the frame holding the end of what was written, from its start {@link
     * #tailFrame}: a write that begins in that frame writes them again before its own.
     */
    private final byte[] tail = new byte[Frames.PAYLOAD];
    private long tailFrame;
    /** The stream bytes and the frames of the group being written ({@link #writeFrames}). */
    private ByteBuffer streamScratch = ByteBuffer.allocate(0);
    private ByteBuffer frameScratch = ByteBuffer.allocate(0);

    /**
     * Stream bytes of blank frames kept written ahead of the log's end while it has not yet gone
     * round the region once: there the region is still zero (a new file's), and a zero frame
     * followed by anything else is damage (see {@link LogReader}). Far enough ahead that the
     * largest group of appends rarely needs a second formatting write.
     */
    static final long FORMAT_AHEAD = 2048L * Frames.PAYLOAD;

    /** Stream position up to which the frames after the tail frame are blank or written. */
    private long formattedTo;
    /** Whether the whole region has been written once (formatted or used): nothing is formatted ahead any more. */
    private boolean allFormatted;

    /** The region {@code [regionOffset, regionOffset + regionBytes)} of {@code dev}, its writes to begin at {@code end}. */
    FrameWriter(BlockDevice dev, long regionOffset, long regionBytes, long end, LongSupplier startNow) {
        this.dev = dev;
        this.regionOffset = regionOffset;
        this.regionBytes = regionBytes;
        this.regionSize = Frames.lap(regionBytes);
        this.startNow = startNow;
        this.tailFrame = Frames.frameStart(end);
    }

    /**
     * The bytes of the frame holding {@code end} before it, as the device has them; none if the
     * frame is not this stream's (a new log starting there: nothing before {@code end} is read).
     */
    void loadTail(long end) {
        if (end == tailFrame) {
            return;
        }
        long off = Frames.frameOffset(regionOffset, regionSize, end);
        if (off + Frames.FRAME > dev.size()) {
            return;
        }
        ByteBuffer f = ByteBuffer.allocate(Frames.FRAME);
        dev.read(off, f);
        Frames.Frame fr = Frames.classify(f, 0, tailFrame);
        if (fr.kind() == Frames.Kind.WRITTEN && fr.fill() >= end - tailFrame) {
            f.get(Frames.HEADER, tail, 0, (int) (end - tailFrame));
        }
    }

    /**
     * Writes blank frames (see {@link Frames}) over a whole region, then syncs: for a region that
     * held another log before (a store that was in log mode, then in direct mode), so that no
     * frame of that log lies beyond where the new one begins. A new store's region, all zeros,
     * needs no more than {@link #prepare}.
     */
    static void format(BlockDevice dev, long regionOffset, long regionBytes) {
        int chunk = (int) Math.min(regionBytes, FORMAT_AHEAD / Frames.PAYLOAD * Frames.FRAME);
        ByteBuffer blank = blankFrames(chunk / Frames.FRAME);
        for (long off = 0; off < regionBytes; off += chunk) {
            ByteBuffer b = blank.duplicate();
            b.limit((int) Math.min(chunk, regionBytes - off));
            dev.write(regionOffset + off, b);
        }
        dev.sync();
    }

    private static ByteBuffer blankFrames(int n) {
        ByteBuffer b = ByteBuffer.allocate(n * Frames.FRAME);
        ByteBuffer none = ByteBuffer.allocate(0);
        for (int i = 0; i < n; i++) {
            Frames.encode(b, i * Frames.FRAME, Frames.BLANK, 0, none, 0, 0);
        }
        return b;
    }

    /**
     * Before the first append of an opening, with the log's end at {@code from} in epoch {@code
     * e}: the frame holding the end written again as this log's (its bytes before the end, the
     * rest empty), and blank frames ahead of it where the region is still zero, then a sync.
     * Recovery then finds, after the last record, a frame of this log whose fill ends there, not
     * zeros before blank frames (which it would take for a zeroed sector).
     */
    void prepare(long from, long e) {
        long fs = Frames.frameStart(from);
        ByteBuffer frame = ByteBuffer.allocate(Frames.FRAME);
        Frames.encode(frame, 0, fs, e, ByteBuffer.wrap(tail), 0, (int) (from - fs));
        writeOut(fs, frame, false);
        // The region's last frame written (formatted or used) means the whole region was: what a
        // first lap writes is one stretch from the region's start. (Not the frame before the start
        // a lap on, as this once read: once a checkpoint has moved the start within the first
        // lap, that frame holds released records while the region's end is still zero.)
        allFormatted = !zeroFrame(Frames.frameStart(regionSize - 1));
        formattedTo = fs + Frames.PAYLOAD;
        if (!formatAhead(from)) {
            dev.sync(); // formatting ahead syncs, covering the frame above; else this does
        }
    }

    /**
     * The leader, before writing frames up to {@code to}: blank frames up to {@link
     * #FORMAT_AHEAD} beyond {@code to} where the region is still zero, never past {@code start}
     * a lap on (live records lie there), and synced. Returns whether it wrote (and synced).
     */
    boolean formatAhead(long to) {
        if (allFormatted || formattedTo >= to + FORMAT_AHEAD / 2) {
            return false; // the common case: no lock taken, nothing read
        }
        long start = startNow.getAsLong();
        // Never past the region's end in this lap: the frames after it, at the region's start,
        // hold records, and judging by them would leave the zeros before the end unformatted.
        long lapEnd = to - to % regionSize + regionSize;
        long end = Math.min(lapEnd, start + regionSize);
        long limit = Frames.frameStart(Math.min(to + FORMAT_AHEAD, end));
        if (limit <= formattedTo) {
            return false;
        }
        if (!zeroFrame(limit - Frames.PAYLOAD)) {
            // Written once already up to there (what is written of a region's first lap is one
            // stretch from where its log began): nothing to blank.
            formattedTo = limit;
            allFormatted = limit >= end;
            return false;
        }
        int n = (int) ((limit - formattedTo) / Frames.PAYLOAD);
        writeOut(formattedTo, blankFrames(n), false);
        // Durable before any frame of the log lands there: a frame a crash then drops reads as
        // blank, never as zero after a written one (which the reader takes for damage).
        dev.sync();
        formattedTo = limit;
        allFormatted = limit >= end;
        return true;
    }

    /** Whether the frame of stream position {@code fs} is all zero on the device (or past its end). */
    private boolean zeroFrame(long fs) {
        long off = Frames.frameOffset(regionOffset, regionSize, fs);
        if (off + Frames.FRAME > dev.size()) {
            return true;
        }
        ByteBuffer f = ByteBuffer.allocate(Frames.FRAME);
        dev.read(off, f);
        return Frames.allZero(f, 0, Frames.FRAME);
    }

    /**
     * Writes the stream bytes {@code bytes}, which begin at position {@code from}, as frames of
     * {@code frameEpoch}: the frame holding {@code from} again with the bytes it holds before
     * it, then the rest. One device write, two across the lap's end. Returns the stream bytes
     * written, from the start of the frame holding {@code from}.
     */
    ByteBuffer writeFrames(long from, ByteBuffer bytes, long frameEpoch, boolean durably) {
        long fs = Frames.frameStart(from);
        int prefix = (int) (from - fs);
        ByteBuffer stream = streamScratch = scratch(streamScratch, prefix + bytes.remaining());
        if (fs == tailFrame) {
            stream.put(tail, 0, prefix);
        } else {
            // a new log's first frame: nothing before from is read (zeros, as a fresh buffer's)
            stream.put(new byte[prefix]);
        }
        stream.put(bytes.duplicate()).flip();
        int frames = (stream.limit() + Frames.PAYLOAD - 1) / Frames.PAYLOAD;
        ByteBuffer out = frameScratch = scratch(frameScratch, frames * Frames.FRAME);
        for (int i = 0; i < frames; i++) {
            int fill = Math.min(Frames.PAYLOAD, stream.limit() - i * Frames.PAYLOAD);
            Frames.encode(out, i * Frames.FRAME, fs + (long) i * Frames.PAYLOAD, frameEpoch, stream, i * Frames.PAYLOAD,
                    fill);
        }
        writeOut(fs, out, durably);
        return stream;
    }

    /** The largest scratch buffer a leader keeps for the next group; a larger group's goes to the collector. */
    private static final int SCRATCH_LIMIT = 4 << 20;

    /**
     * {@code b} cleared and limited to {@code bytes} when it holds them, else a new buffer (kept
     * by the caller for the next group unless over {@link #SCRATCH_LIMIT}): a commit then
     * allocates and zeroes nothing, where a buffer per commit cost a group of 4 KB values page
     * faults and zeroing. The leader's alone, like {@link #tail}.
     */
    private static ByteBuffer scratch(ByteBuffer b, int bytes) {
        if (b.capacity() >= bytes) {
            return b.clear().limit(bytes);
        }
        int keep = Math.max(bytes, Math.min(2 * b.capacity(), SCRATCH_LIMIT));
        return ByteBuffer.allocate(bytes > SCRATCH_LIMIT ? bytes : keep).limit(bytes);
    }

    /**
     * Lets go of the scratch buffers: the log's close, under its monitor with no leader (so
     * between leaderships, as every use here is).
     */
    void releaseScratch() {
        streamScratch = ByteBuffer.allocate(0);
        frameScratch = ByteBuffer.allocate(0);
    }

    /** After a write of {@code stream} (see {@link #writeFrames}) of records from {@code from}: its last frame is the tail. */
    void advanceTail(long from, ByteBuffer stream) {
        long fs = Frames.frameStart(from);
        long to = fs + stream.limit();
        long last = Frames.frameStart(to);
        if (last < to) {
            stream.get((int) (last - fs), tail, 0, (int) (to - last));
        }
        tailFrame = last;
    }

    /**
     * Writes whole frames whose first holds position {@code fs}: one write, or two across the
     * lap's end. With {@code durably} they are durable when it returns: one durable write, or
     * across the lap's end the two writes and a sync (one sync covers a group).
     */
    private void writeOut(long fs, ByteBuffer frames, boolean durably) {
        long first = (fs % regionSize) / Frames.PAYLOAD;
        long inLap = regionBytes / Frames.FRAME;
        int n = (int) Math.min(frames.remaining() / Frames.FRAME, inLap - first) * Frames.FRAME;
        ByteBuffer part = frames.duplicate();
        part.limit(n);
        long at = regionOffset + first * Frames.FRAME;
        if (n == frames.remaining()) {
            if (durably) {
                dev.writeDurable(at, part);
            } else {
                dev.write(at, part);
            }
            return;
        }
        dev.write(at, part);
        dev.write(regionOffset, frames.duplicate().position(n));
        if (durably) {
            dev.sync();
        }
    }

    /**
     * After a failed write of the records from {@code from}, which may have reached {@code to}:
     * the frame holding {@code from} written again, in epoch {@code e}, with the bytes before
     * {@code from} it held, and blank frames over the rest of the range, with no sync (the caller
     * syncs).
     */
    void overwriteFailed(long from, long to, long e) {
        long fs = Frames.frameStart(from);
        int frames = (int) ((Math.min(to, from + regionSize) - fs + Frames.PAYLOAD - 1) / Frames.PAYLOAD);
        ByteBuffer out = blankFrames(frames);
        ByteBuffer before = ByteBuffer.wrap(fs == tailFrame ? tail : new byte[Frames.PAYLOAD]);
        Frames.encode(out, 0, fs, e, before, 0, (int) (from - fs));
        writeOut(fs, out, false);
    }
}
