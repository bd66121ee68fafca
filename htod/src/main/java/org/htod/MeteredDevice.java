package org.htod;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;

/**
 * The device under every store, counting what passes through for {@link HtodStore#stats()}: one
 * {@link LongAdder} increment per call, no lock and no shared write between threads. (Core's
 * {@code CountingDevice} also sums seek distances, which takes a shared atomic per call: a test's
 * tool, not a production one.)
 */
final class MeteredDevice extends ForwardingDevice {
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder syncs = new LongAdder();

    MeteredDevice(BlockDevice inner) {
        super(inner);
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        int len = dst.remaining();
        inner.read(pos, dst);
        reads.increment();
        bytesRead.add(len);
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        int len = src.remaining();
        inner.write(pos, src);
        writes.increment();
        bytesWritten.add(len);
    }

    @Override
    public void sync() {
        inner.sync();
        syncs.increment();
    }

    StoreStats.DeviceIo counts() {
        return new StoreStats.DeviceIo(reads.sum(), writes.sum(), bytesRead.sum(), bytesWritten.sum(), syncs.sum());
    }
}
