package org.htod.core.device;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;

/**
 * A device over another that it only reads: every write lands in memory, in pages copied from
 * the device below on their first write, and reads see those pages over the device's bytes. What
 * an open writes to recover a store (a log replayed and checkpointed, headers repaired, a clean
 * flag) and what a verify writes stay here, and are gone at close: a store opened read-only is
 * inspected as it is on disk, and the disk keeps the evidence of a crash for the next look.
 * Sync does nothing. The device below is closed with this one.
 *
 * <p>Every method holds this device's monitor: meant for an inspection, not for many threads.
 */
public final class OverlayDevice implements BlockDevice {
    /** Small, as what is written here is mostly small: a free block's next pointer, a header. */
    private static final int PAGE = 512;

    private final BlockDevice below;
    /** The size of {@link #below}, which nothing changes while this device reads it (it is locked). */
    private final long belowSize;
    /** Pages written here, by page number. Guarded by this. */
    private final Map<Long, byte[]> pages = new HashMap<>();
    /** The most bytes of pages this device holds; a write past it throws {@link StoreFullException}. */
    private final long maxHeldBytes;
    private long size;
    private boolean closed;

    /** Over {@code below}, holding at most a quarter of the most memory the JVM may use. */
    public OverlayDevice(BlockDevice below) {
        this(below, Runtime.getRuntime().maxMemory() / 4);
    }

    public OverlayDevice(BlockDevice below, long maxHeldBytes) {
        this.below = below;
        this.belowSize = below.size();
        this.size = belowSize;
        this.maxHeldBytes = maxHeldBytes;
    }

    @Override
    public synchronized void read(long pos, ByteBuffer dst) {
        ensureOpen();
        int len = dst.remaining();
        if (pos < 0 || pos > size - len) {
            throw new HtodIOException("read of " + len + " bytes at offset " + pos + " past the end of " + name()
                    + " (size " + size + ")", new EOFException("end at " + size));
        }
        long at = pos;
        long end = pos + len;
        while (at < end) {
            byte[] p = pages.get(at / PAGE);
            int off = (int) (at % PAGE);
            if (p != null) {
                int n = (int) Math.min(end - at, PAGE - off);
                dst.put(p, off, n);
                at += n;
                continue;
            }
            long runEnd = Math.min(end, (at / PAGE + 1) * PAGE); // the pages not written here, read at once
            while (runEnd < end && !pages.containsKey(runEnd / PAGE)) {
                runEnd = Math.min(end, runEnd + PAGE);
            }
            readBelow(at, dst, (int) (runEnd - at));
            at = runEnd;
        }
    }

    /** {@code n} bytes at {@code at} from the device below, zeros past its end. */
    private void readBelow(long at, ByteBuffer dst, int n) {
        int fromBelow = (int) Math.max(0, Math.min(n, belowSize - at));
        if (fromBelow > 0) {
            int limit = dst.limit();
            dst.limit(dst.position() + fromBelow);
            try {
                below.read(at, dst);
            } finally {
                dst.limit(limit);
            }
        }
        for (int i = fromBelow; i < n; i++) {
            dst.put((byte) 0);
        }
    }

    @Override
    public synchronized void write(long pos, ByteBuffer src) {
        ensureOpen();
        int len = src.remaining();
        if (pos < 0 || pos > capacity() - len) {
            throw new StoreFullException("write of " + len + " bytes at offset " + pos + " exceeds the capacity "
                    + capacity() + " of " + name());
        }
        if (len == 0) {
            return; // grows nothing, as on any device
        }
        long end = pos + len;
        long fresh = 0;
        for (long page = pos / PAGE; page <= (end - 1) / PAGE; page++) {
            fresh += pages.containsKey(page) ? 0 : 1;
        }
        if ((pages.size() + fresh) * PAGE > maxHeldBytes) {
            // Before anything is written, as the contract asks; a clear error rather than the JVM
            // out of memory: a store whose recovery writes this much needs a writable open.
            throw new StoreFullException("write of " + len + " bytes at offset " + pos + " of " + name()
                    + ", open read-only: the writes it holds in memory would pass " + maxHeldBytes + " bytes");
        }
        long at = pos;
        while (at < end) {
            long page = at / PAGE;
            byte[] p = pages.get(page);
            if (p == null) {
                p = new byte[PAGE];
                readBelow(page * PAGE, ByteBuffer.wrap(p), PAGE); // a write of part of it keeps the rest
                pages.put(page, p);
            }
            int off = (int) (at % PAGE);
            int n = (int) Math.min(end - at, PAGE - off);
            src.get(p, off, n);
            at += n;
        }
        size = Math.max(size, end);
    }

    /** Nothing is made durable: what is written here is gone at close. */
    @Override
    public synchronized void sync() {
        ensureOpen();
    }

    @Override
    public synchronized long size() {
        ensureOpen();
        return size;
    }

    @Override
    public long capacity() {
        return below.capacity();
    }

    @Override
    public int sectorSize() {
        return below.sectorSize();
    }

    @Override
    public String name() {
        return below.name();
    }

    /** Bytes written here and held in memory: whole pages. */
    public synchronized long heldBytes() {
        return (long) pages.size() * PAGE;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        pages.clear();
        below.close();
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException(name() + " is closed");
        }
    }
}
