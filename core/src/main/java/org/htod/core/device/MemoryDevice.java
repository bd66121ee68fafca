package org.htod.core.device;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;

/**
 * A device in memory, for fast tests. Sparse: storage is kept in 64 KiB chunks allocated on first
 * write, so a heap with a large tail but few live blocks costs little. Sync is a no-op, since
 * nothing here survives the process anyway.
 */
public final class MemoryDevice implements BlockDevice {
    private static final int CHUNK_SHIFT = 16;
    private static final int CHUNK_SIZE = 1 << CHUNK_SHIFT;

    private final ConcurrentHashMap<Long, byte[]> chunks;
    /** Shared by every device over these bytes, as a file's size is by every handle on it. */
    private final AtomicLong size;
    private final long capacity;
    private final int sectorSize;
    private final String name;
    private volatile boolean closed;

    public MemoryDevice() {
        this(Long.MAX_VALUE, 512);
    }

    public MemoryDevice(long capacity, int sectorSize) {
        this(new ConcurrentHashMap<>(), new AtomicLong(), capacity, sectorSize);
    }

    private MemoryDevice(ConcurrentHashMap<Long, byte[]> chunks, AtomicLong size, long capacity, int sectorSize) {
        if (sectorSize <= 0 || Integer.bitCount(sectorSize) != 1) {
            throw new IllegalArgumentException("sector size must be a power of two, got " + sectorSize);
        }
        this.chunks = chunks;
        this.size = size;
        this.capacity = capacity;
        this.sectorSize = sectorSize;
        this.name = "memory device@" + Integer.toHexString(System.identityHashCode(this));
    }

    /**
     * A new, open device over the same bytes, as reopening a file gives after closing it: it sees
     * what any device over them wrote, whichever of them it is reopened from. Meant for a closed
     * device: using both at once is not synchronised beyond what one device does.
     */
    public MemoryDevice reopen() {
        return new MemoryDevice(chunks, size, capacity, sectorSize);
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        ensureOpen();
        int len = dst.remaining();
        long end = size.get();
        if (pos < 0 || pos > end - len) {
            throw new HtodIOException("read of " + len + " bytes at offset " + pos + " past the end of "
                    + name + " (size " + end + ")", new java.io.EOFException());
        }
        while (dst.hasRemaining()) {
            long chunk = pos >>> CHUNK_SHIFT;
            int off = (int) (pos & (CHUNK_SIZE - 1));
            int n = Math.min(dst.remaining(), CHUNK_SIZE - off);
            byte[] data = chunks.get(chunk);
            if (data == null) {
                for (int i = 0; i < n; i++) {
                    dst.put((byte) 0);
                }
            } else {
                dst.put(data, off, n);
            }
            pos += n;
        }
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        ensureOpen();
        int len = src.remaining();
        if (pos < 0 || pos > capacity - len) {
            throw new StoreFullException("write of " + len + " bytes at offset " + pos + " exceeds the capacity "
                    + capacity + " of " + name);
        }
        if (len == 0) {
            return; // like pwrite of nothing: the size does not change
        }
        long end = pos + len;
        while (src.hasRemaining()) {
            long chunk = pos >>> CHUNK_SHIFT;
            int off = (int) (pos & (CHUNK_SIZE - 1));
            int n = Math.min(src.remaining(), CHUNK_SIZE - off);
            byte[] data = chunks.computeIfAbsent(chunk, c -> new byte[CHUNK_SIZE]);
            src.get(data, off, n);
            pos += n;
        }
        size.accumulateAndGet(end, Math::max);
    }

    @Override
    public void sync() {
        ensureOpen();
    }

    @Override
    public long size() {
        ensureOpen();
        return size.get();
    }

    @Override
    public long capacity() {
        return capacity;
    }

    @Override
    public int sectorSize() {
        return sectorSize;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void close() {
        closed = true;
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException(name + " is closed");
        }
    }
}
