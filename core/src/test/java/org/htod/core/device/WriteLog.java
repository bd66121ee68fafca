package org.htod.core.device;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** Test wrapper that records the position and length of every write, in order. */
public final class WriteLog extends ForwardingDevice {
    /** {position, length} of each write so far. */
    public final List<long[]> writes = new ArrayList<>();

    public WriteLog(BlockDevice inner) {
        super(inner);
    }

    @Override
    public synchronized void write(long pos, ByteBuffer src) {
        writes.add(new long[] {pos, src.remaining()});
        inner.write(pos, src);
    }
}
