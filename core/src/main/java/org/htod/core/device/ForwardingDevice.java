package org.htod.core.device;

import java.nio.ByteBuffer;

/**
 * A device that passes every call to another; wrappers override what they observe or change.
 */
public abstract class ForwardingDevice implements BlockDevice {
    protected final BlockDevice inner;

    protected ForwardingDevice(BlockDevice inner) {
        this.inner = inner;
    }

    /** The wrapped device. */
    public BlockDevice inner() {
        return inner;
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        inner.read(pos, dst);
    }

    @Override
    public void write(long pos, ByteBuffer src) {
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
