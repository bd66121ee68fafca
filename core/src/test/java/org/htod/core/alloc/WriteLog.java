package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;

/** Test wrapper that records the position and length of every write, in order. */
final class WriteLog extends ForwardingDevice {
    final List<long[]> writes = new ArrayList<>();

    WriteLog(BlockDevice inner) {
        super(inner);
    }

    @Override
    public synchronized void write(long pos, ByteBuffer src) {
        writes.add(new long[] {pos, src.remaining()});
        inner.write(pos, src);
    }
}
