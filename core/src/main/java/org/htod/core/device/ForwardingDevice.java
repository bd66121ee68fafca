package org.htod.core.device;

import java.nio.ByteBuffer;

/**
 * A device that passes every call to another; wrappers override what they observe or change.
 * {@link #writeDurable} is the exception: it stays the interface's write then sync through this
 * wrapper's own {@link #write} and {@link #sync}, so that a wrapper overriding those two sees
 * every write; one that passes it down (the counting device) says so.
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
