package org.htod.core.device;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the I/O that passes through it, for tests that assert what an operation costs ("a TS
 * free is one write") and for benchmark reports.
 */
public final class CountingDevice extends ForwardingDevice {
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder syncs = new LongAdder();
    private final LongAdder seekDistance = new LongAdder();
    private final AtomicLong lastEnd = new AtomicLong(-1);

    public CountingDevice(BlockDevice inner) {
        super(inner);
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
        writes.increment();
        bytesWritten.add(len);
        seek(pos, len);
    }

    @Override
    public void sync() {
        inner.sync();
        syncs.increment();
    }
}
