package org.htod.core.device;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.htod.core.StoreClosedException;

/**
 * Simulates power loss. Writes since the last {@link #sync()} are kept apart (reads see them, the
 * device below does not); a sync applies them. {@link #crash(long)} then decides, from the seed,
 * which of the pending writes reached the platter: each is kept whole or dropped, and at most one
 * is torn, keeping only some of the sectors it covered. What survives is applied, in issue order,
 * to the device below, which the test reopens. The same seed and the same writes give the same
 * result.
 *
 * <p>{@link #armCrashAfterWrites(int)} makes the n-th following write throw a {@link
 * SimulatedCrashException} before it reaches the device, so that an operation stops mid-way, as
 * when the power fails between two of its writes; every later write and sync fails the same way.
 */
public final class CrashDevice implements BlockDevice {
    private final BlockDevice below;
    private final List<Pending> pending = new ArrayList<>();
    private long size;
    private int writesUntilCrash = -1;
    private boolean crashed;
    private boolean closed;

    private record Pending(long pos, byte[] data) {}

    /** What a crash kept, tore and dropped, for test messages. */
    public record CrashReport(int pending, int kept, int dropped, int tornSectorsKept, int tornSectorsDropped) {}

    public CrashDevice(BlockDevice below) {
        this.below = below;
        this.size = below.size();
    }

    /** The device under the simulated cache: what is on the platter. */
    public BlockDevice underlying() {
        return below;
    }

    /** The {@code n}-th write from now (1 = the next) fails with {@link SimulatedCrashException}. */
    public synchronized void armCrashAfterWrites(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be at least 1, got " + n);
        }
        writesUntilCrash = n;
    }

    public synchronized int pendingWrites() {
        return pending.size();
    }

    @Override
    public synchronized void read(long pos, ByteBuffer dst) {
        ensureOpen();
        int len = dst.remaining();
        int start = dst.position();
        if (pos < 0 || pos > size - len) {
            below.read(pos, dst); // lets the device below report the error in its own words
            return;
        }
        long belowSize = below.size();
        if (pos < belowSize) {
            ByteBuffer part = dst.duplicate();
            part.limit(start + (int) Math.min(len, belowSize - pos));
            below.read(pos, part);
        }
        for (int i = (int) Math.max(0, belowSize - pos); i < len; i++) {
            dst.put(start + i, (byte) 0);
        }
        for (Pending p : pending) {
            long from = Math.max(pos, p.pos);
            long to = Math.min(pos + len, p.pos + p.data.length);
            if (from < to) {
                dst.put(start + (int) (from - pos), p.data, (int) (from - p.pos), (int) (to - from));
            }
        }
        dst.position(start + len);
    }

    @Override
    public synchronized void write(long pos, ByteBuffer src) {
        ensureOpen();
        if (crashed) {
            throw new SimulatedCrashException("power already lost on " + below.name());
        }
        if (writesUntilCrash > 0 && --writesUntilCrash == 0) {
            crashed = true;
            throw new SimulatedCrashException("power lost at a write of " + src.remaining() + " bytes at offset " + pos
                    + " on " + below.name());
        }
        if (pos < 0 || pos > below.capacity() - src.remaining()) {
            below.write(pos, src); // the device below refuses it with its own error
            return;
        }
        if (!src.hasRemaining()) {
            return; // nothing reaches the platter, and the size does not change
        }
        byte[] data = new byte[src.remaining()];
        src.get(data);
        pending.add(new Pending(pos, data));
        size = Math.max(size, pos + data.length);
    }

    @Override
    public synchronized void sync() {
        ensureOpen();
        if (crashed) {
            throw new SimulatedCrashException("power already lost on " + below.name());
        }
        for (Pending p : pending) {
            below.write(p.pos, ByteBuffer.wrap(p.data));
        }
        pending.clear();
        below.sync();
    }

    /**
     * Loses power: applies a seeded selection of the pending writes to the device below and closes
     * this one. Reopen the store on {@link #underlying()}.
     */
    public synchronized CrashReport crash(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int n = pending.size();
        int torn = n == 0 ? -1 : r.nextInt(n + 1) - 1; // -1: none torn
        int kept = 0;
        int sectorsKept = 0;
        int sectorsDropped = 0;
        int sector = sectorSize();
        for (int i = 0; i < n; i++) {
            Pending p = pending.get(i);
            if (i == torn) {
                long first = p.pos / sector;
                long last = (p.pos + p.data.length - 1) / sector;
                for (long s = first; s <= last; s++) {
                    if (r.nextBoolean()) {
                        long from = Math.max(p.pos, s * sector);
                        long to = Math.min(p.pos + p.data.length, (s + 1) * sector);
                        below.write(from, ByteBuffer.wrap(p.data, (int) (from - p.pos), (int) (to - from)));
                        sectorsKept++;
                    } else {
                        sectorsDropped++;
                    }
                }
            } else if (r.nextBoolean()) {
                below.write(p.pos, ByteBuffer.wrap(p.data));
                kept++;
            }
        }
        pending.clear();
        closed = true;
        int wholeDecided = torn >= 0 ? n - 1 : n;
        return new CrashReport(n, kept, wholeDecided - kept, sectorsKept, sectorsDropped);
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
        return "crash-simulating " + below.name();
    }

    @Override
    public synchronized void close() {
        closed = true;
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException(name() + " is closed");
        }
    }
}
