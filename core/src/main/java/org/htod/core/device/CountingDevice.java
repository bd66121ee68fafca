package org.htod.core.device;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the I/O that passes through it, for tests that assert what an operation costs ("a TS
 * free is one write"), for benchmark reports, and under every store for its statistics. Each
 * count is one {@link LongAdder} increment, with no lock and no write shared between threads;
 * the seek distance, which takes a shared atomic per call, only when asked for.
 */
public final class CountingDevice extends ForwardingDevice {
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder syncs = new LongAdder();
    private final LongAdder seekDistance = new LongAdder();
    private final AtomicLong lastEnd = new AtomicLong(-1);
    private final boolean seeks;

    /** Counts everything, seek distance included. */
    public CountingDevice(BlockDevice inner) {
        this(inner, true);
    }

    /** With {@code seeks} false, leaves the seek distance at 0 and costs no shared write per call. */
    public CountingDevice(BlockDevice inner, boolean seeks) {
        super(inner);
        this.seeks = seeks;
    }

    /** The counts since creation or the last {@link #reset()}. */
    public IoCounts counts() {
        return new IoCounts(reads.sum(), writes.sum(), bytesRead.sum(), bytesWritten.sum(), syncs.sum(),
                seekDistance.sum());
    }

    public void reset() {
        reads.reset();
        writes.reset();
        bytesRead.reset();
        bytesWritten.reset();
        syncs.reset();
        seekDistance.reset();
        lastEnd.set(-1);
    }

    private void seek(long pos, int len) {
        if (!seeks) {
            return;
        }
        long prev = lastEnd.getAndSet(pos + len);
        if (prev >= 0) {
            seekDistance.add(Math.abs(pos - prev));
        }
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        int len = dst.remaining();
        inner.read(pos, dst);
        reads.increment();
        bytesRead.add(len);
        seek(pos, len);
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        int len = src.remaining();
        inner.write(pos, src);
        wrote(pos, len);
    }

    private void wrote(long pos, int len) {
        writes.increment();
        bytesWritten.add(len);
        seek(pos, len);
    }

    @Override
    public void sync() {
        inner.sync();
        syncs.increment();
    }

    /** One write and one sync in the counts, whichever way the device below makes it durable. */
    @Override
    public void writeDurable(long pos, ByteBuffer src) {
        int len = src.remaining();
        inner.writeDurable(pos, src);
        wrote(pos, len);
        syncs.increment();
    }
}
