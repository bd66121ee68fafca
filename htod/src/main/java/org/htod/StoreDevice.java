package org.htod;

import java.nio.ByteBuffer;
import org.htod.core.StoreClosedException;
import org.htod.core.device.BlockDevice;

/**
 * The device a store was opened on, as the store holds it: every call passes to that device
 * until {@link #close} closes it and lets go of it. A closed store that an application still
 * refers to (or a map of it) then keeps no device reachable: not a memory device's bytes with
 * the blank frames its log formatted ahead, not a read-only open's overlay, not a file's channel
 * and mappings. The device itself is left as its close leaves it: a memory device given to the
 * builder keeps its bytes for whoever opens it again ({@code MemoryDevice.reopen}).
 *
 * <p>After close, a read, write, sync or size throws {@link StoreClosedException}, as a closed
 * device does; the name, capacity and sector size, which messages and {@code toString} use,
 * stay as they were at the open.
 */
final class StoreDevice implements BlockDevice {
    /** Null once closed. */
    private volatile BlockDevice device;
    private final String name;
    private final long capacity;
    private final int sectorSize;

    StoreDevice(BlockDevice device) {
        this.device = device;
        this.name = device.name();
        this.capacity = device.capacity();
        this.sectorSize = device.sectorSize();
    }

    private BlockDevice open() {
        BlockDevice d = device;
        if (d == null) {
            throw new StoreClosedException(name + " is closed");
        }
        return d;
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        open().read(pos, dst);
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        open().write(pos, src);
    }

    @Override
    public void sync() {
        open().sync();
    }

    /** The device's own: a file device writes through in one call where it can. */
    @Override
    public void writeDurable(long pos, ByteBuffer src) {
        open().writeDurable(pos, src);
    }

    @Override
    public long size() {
        return open().size();
    }

    @Override
    public long capacity() {
        BlockDevice d = device;
        return d != null ? d.capacity() : capacity;
    }

    @Override
    public int sectorSize() {
        BlockDevice d = device;
        return d != null ? d.sectorSize() : sectorSize;
    }

    @Override
    public String name() {
        BlockDevice d = device;
        return d != null ? d.name() : name;
    }

    /**
     * Closes the device, then lets go of it; a close that throws keeps it, as it may still be
     * open (a file locked).
     */
    @Override
    public void close() {
        BlockDevice d = device;
        if (d != null) {
            d.close();
            device = null;
        }
    }
}
