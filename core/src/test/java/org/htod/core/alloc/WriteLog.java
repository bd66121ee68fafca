package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.device.BlockDevice;

/** Test wrapper that records the position and length of every write, in order. */
final class WriteLog implements BlockDevice {
    final BlockDevice inner;
    final List<long[]> writes = new ArrayList<>();

    WriteLog(BlockDevice inner) {
        this.inner = inner;
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        inner.read(pos, dst);
    }

    @Override
    public synchronized void write(long pos, ByteBuffer src) {
        writes.add(new long[] {pos, src.remaining()});
        inner.write(pos, src);
    }

    @Override
    public void sync() {
        inner.sync();
    }

    @Override
    public long size() {
        return inner.size();
    }

    @Override
    public long capacity() {
        return inner.capacity();
    }

    @Override
    public int sectorSize() {
        return inner.sectorSize();
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public void close() {
        inner.close();
    }
}
