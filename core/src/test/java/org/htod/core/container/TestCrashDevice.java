package org.htod.core.container;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.MemoryDevice;

/**
 * A device that loses power on demand, for the container's crash tests. What a sync has made
 * durable lives in a {@link MemoryDevice}, the "disk"; writes since the last sync are kept apart
 * and are visible to reads. {@link #crash(long)} keeps a seeded random subset of them, tears at
 * most one at {@code tearUnit} granularity (any subset of its aligned pieces survives), drops the
 * rest, and hands back the disk for reopening.
 *
 * <p>{@link #failAtWrite(long)} makes the n-th later write the moment power goes: that write is
 * kept pending (it may land whole, torn or not at all), throws, and every later call throws too.
 */
final class TestCrashDevice implements BlockDevice {
    private final MemoryDevice disk;
    private final int tearUnit;
    private final List<Write> pending = new ArrayList<>();
    private long writes;
    private long failAt = Long.MAX_VALUE;
    private boolean powerLost;
    private boolean closed;

    private static final class Write {
        final long pos;
        final byte[] data;

        Write(long pos, byte[] data) {
            this.pos = pos;
            this.data = data;
        }
    }

    /** A device over a fresh disk, tearing at its sector size. */
    TestCrashDevice(long capacity, int sectorSize) {
        this(new MemoryDevice(capacity, sectorSize), sectorSize);
    }

    /**
     * A device over {@code disk}. A {@code tearUnit} below the sector size breaks the device
     * contract on purpose, to show that checksums catch what sector atomicity would have hidden.
     */
    TestCrashDevice(MemoryDevice disk, int tearUnit) {
        this.disk = disk;
        this.tearUnit = tearUnit;
    }

    /** The n-th write from now (1 for the next one) loses power. */
    synchronized void failAtWrite(long n) {
        failAt = writes + n;
    }

    /** Writes issued so far, including one that failed. */
    synchronized long writeCount() {
        return writes;
    }

    synchronized int pendingCount() {
        return pending.size();
    }

    /**
     * Power loss: applies a random subset of the pending writes to the disk, in issue order,
     * tearing at most one, and returns the disk. The device is unusable afterwards.
     */
    synchronized MemoryDevice crash(long seed) {
        return crash(seed, false);
    }

    /** As {@link #crash(long)}; with {@code forceTear}, one pending write is always torn. */
    synchronized MemoryDevice crash(long seed, boolean forceTear) {
        Random random = new Random(seed);
        int n = pending.size();
        int torn = n == 0 ? -1 : forceTear ? random.nextInt(n) : random.nextInt(n + 1);
        for (int i = 0; i < n; i++) {
            Write w = pending.get(i);
            if (i == torn) {
                tear(w, random);
            } else if (random.nextBoolean()) {
                disk.write(w.pos, ByteBuffer.wrap(w.data));
            }
        }
        pending.clear();
        powerLost = true;
        return disk;
    }

    /** Keeps a random subset of the write's tear-unit pieces, aligned to absolute offsets. */
    private void tear(Write w, Random random) {
        long end = w.pos + w.data.length;
        long start = w.pos;
        while (start < end) {
            long next = Math.min(end, (start / tearUnit + 1) * tearUnit);
            if (random.nextBoolean()) {
                disk.write(start, ByteBuffer.wrap(w.data, (int) (start - w.pos), (int) (next - start)));
            }
            start = next;
        }
    }

    @Override
    public synchronized void read(long pos, ByteBuffer dst) {
        ensureUsable();
        int len = dst.remaining();
        long size = size();
        if (pos < 0 || pos + len > size) {
            throw new HtodIOException("read of " + len + " bytes at offset " + pos + " past the end of " + name()
                    + " (size " + size + ")", new java.io.EOFException());
        }
        byte[] buf = new byte[len];
        long durable = Math.max(0, Math.min(len, disk.size() - pos));
        if (durable > 0) {
            disk.read(pos, ByteBuffer.wrap(buf, 0, (int) durable));
        }
        for (Write w : pending) {
            long from = Math.max(pos, w.pos);
            long to = Math.min(pos + len, w.pos + w.data.length);
            if (from < to) {
                System.arraycopy(w.data, (int) (from - w.pos), buf, (int) (from - pos), (int) (to - from));
            }
        }
        dst.put(buf);
    }

    @Override
    public synchronized void write(long pos, ByteBuffer src) {
        ensureUsable();
        if (pos < 0 || pos > capacity() - src.remaining()) {
            throw new StoreFullException("write of " + src.remaining() + " bytes at offset " + pos
                    + " exceeds the capacity " + capacity() + " of " + name());
        }
        writes++;
        byte[] data = new byte[src.remaining()];
        src.get(data);
        pending.add(new Write(pos, data));
        if (writes == failAt) {
            powerLost = true;
            throw new HtodIOException("power lost during write " + writes + " of " + data.length
                    + " bytes at offset " + pos + " on " + name(), new java.io.IOException("simulated power loss"));
        }
    }

    @Override
    public synchronized void sync() {
        ensureUsable();
        for (Write w : pending) {
            disk.write(w.pos, ByteBuffer.wrap(w.data));
        }
        pending.clear();
    }

    @Override
    public synchronized long size() {
        ensureUsable();
        long size = disk.size();
        for (Write w : pending) {
            size = Math.max(size, w.pos + w.data.length);
        }
        return size;
    }

    @Override
    public long capacity() {
        return disk.capacity();
    }

    @Override
    public int sectorSize() {
        return disk.sectorSize();
    }

    @Override
    public String name() {
        return "crash device over " + disk.name();
    }

    @Override
    public synchronized void close() {
        closed = true;
    }

    private void ensureUsable() {
        if (closed) {
            throw new StoreClosedException(name() + " is closed");
        }
        if (powerLost) {
            throw new HtodIOException(name() + " has lost power", new java.io.IOException("simulated power loss"));
        }
    }
}
