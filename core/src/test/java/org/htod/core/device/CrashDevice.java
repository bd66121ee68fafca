package org.htod.core.device;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.htod.core.StoreClosedException;

/**
 * Simulates power loss; the one crash simulator of the project's tests, shipped in the core test
 * kit. Writes since the last {@link #sync()} are kept apart (reads see them, the device below
 * does not); a sync applies them. {@link #crash(long)} then decides, from the seed, which of the
 * pending writes reached the platter: each is kept whole or dropped, and at most one is torn,
 * keeping any subset of the tear units it covers (the sector size, or less to break the device
 * contract on purpose and show what only a checksum catches). What survives is applied, in issue
 * order, to the device below, which the test reopens. The same seed and the same writes give the
 * same platter.
 *
 * <p>A power cut can be armed at the n-th following call, so that an operation stops mid-way:
 *
 * <ul>
 *   <li>{@link Counting}: whether syncs count, or only writes;
 *   <li>a sync at the cut does not happen: the writes it was to make durable stay pending and the
 *       crash keeps any subset of them, as when power fails while the disk flushes its cache;
 *   <li>{@link CutWrite}: a write at the cut never reaches the device, or stays pending as a write
 *       in flight that the crash may keep whole, torn or not at all;
 *   <li>the call at the cut, and every later write and sync, throws {@link
 *       SimulatedCrashException}; reads still see what was written, until {@link #crash}.
 * </ul>
 *
 * <p>{@link #writeDurable} counts as a write and, with {@link Counting#WRITES_AND_SYNCS}, a
 * sync after it: cut at the write, it is a write at the cut; cut at the sync, it stays pending.
 * Otherwise it reaches the device below at once, and alone: the writes pending before it stay
 * pending (less what it overwrote, since it lands after them), which is the least a write through
 * ({@code O_DSYNC}) promises, so that a layer counting on it to make anything else durable fails
 * the crash tests.
 */
public final class CrashDevice implements BlockDevice {
    /** Which calls an armed power cut counts. */
    public enum Counting { WRITES, WRITES_AND_SYNCS }

    /** What becomes of a write at the cut. */
    public enum CutWrite {
        /** It never reaches the device. */
        LOST,
        /** It is pending: the crash keeps it whole, torn or not at all. */
        IN_FLIGHT
    }

    private final BlockDevice below;
    private final int tearUnit;
    private final List<Pending> pending = new ArrayList<>();
    private long size;
    private long writes;
    private long untilCut = -1;
    private Counting counting = Counting.WRITES;
    private CutWrite cutWrite = CutWrite.LOST;
    private boolean cut;
    private boolean cutAtSync;
    private boolean closed;

    private record Pending(long pos, byte[] data) {}

    /** What a crash kept, tore and dropped, for test messages. */
    public record CrashReport(int pending, int kept, int dropped, int tornSectorsKept, int tornSectorsDropped) {}

    /** A crash simulator over {@code below}, tearing at its sector size. */
    public CrashDevice(BlockDevice below) {
        this(below, below.sectorSize());
    }

    /**
     * A crash simulator over {@code below} tearing at {@code tearUnit} bytes, a power of two. Below
     * the sector size it breaks the device contract on purpose.
     */
    public CrashDevice(BlockDevice below, int tearUnit) {
        if (tearUnit <= 0 || Integer.bitCount(tearUnit) != 1) {
            throw new IllegalArgumentException("tear unit must be a power of two, got " + tearUnit);
        }
        this.below = below;
        this.tearUnit = tearUnit;
        this.size = below.size();
    }

    /** The device under the simulated cache: what is on the platter. */
    public BlockDevice underlying() {
        return below;
    }

    /** The {@code n}-th write from now (1 = the next) loses power, and never reaches the device. */
    public synchronized void armCrashAfterWrites(int n) {
        armPowerCut(n, Counting.WRITES, CutWrite.LOST);
    }

    /** Power fails at the {@code n}-th counted call from now (1 = the next); see the class comment. */
    public synchronized void armPowerCut(long n, Counting counts, CutWrite atCut) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be at least 1, got " + n);
        }
        untilCut = n;
        counting = counts;
        cutWrite = atCut;
    }

    /** Whether the armed power cut has happened. */
    public synchronized boolean powerCut() {
        return cut;
    }

    /** Whether the power cut fell on a sync rather than a write. */
    public synchronized boolean cutAtSync() {
        return cutAtSync;
    }

    /** Writes issued so far, the one at a power cut included, refused ones (beyond the capacity) not. */
    public synchronized long writeCount() {
        return writes;
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
        ensurePowered();
        if (pos < 0 || pos > below.capacity() - src.remaining()) {
            below.write(pos, src); // the device below refuses it with its own error
            return;
        }
        writes++;
        boolean atCut = reachesCut();
        String what = "a write of " + src.remaining() + " bytes at offset " + pos;
        if (atCut && cutWrite == CutWrite.LOST) {
            throw new SimulatedCrashException("power lost at " + what + " on " + below.name() + ", which never landed");
        }
        if (src.hasRemaining()) { // an empty write reaches nothing and does not change the size
            byte[] data = new byte[src.remaining()];
            src.get(data);
            pending.add(new Pending(pos, data));
            size = Math.max(size, pos + data.length);
        }
        if (atCut) {
            throw new SimulatedCrashException("power lost during " + what + " on " + below.name()
                    + ", which may land whole, torn or not at all");
        }
    }

    @Override
    public synchronized void sync() {
        ensureOpen();
        ensurePowered();
        if (counting == Counting.WRITES_AND_SYNCS && reachesCut()) {
            cutAtSync = true;
            throw new SimulatedCrashException("power lost at a sync of " + below.name() + ", with " + pending.size()
                    + " writes pending");
        }
        for (Pending p : pending) {
            below.write(p.pos, ByteBuffer.wrap(p.data));
        }
        pending.clear();
        below.sync();
    }

    @Override
    public synchronized void writeDurable(long pos, ByteBuffer src) {
        int before = pending.size();
        write(pos, src); // a cut here throws, the write lost or pending as a write at the cut
        if (pending.size() == before) {
            return; // empty, or refused below
        }
        if (counting == Counting.WRITES_AND_SYNCS && reachesCut()) {
            cutAtSync = true;
            throw new SimulatedCrashException("power lost while a synchronous write of " + below.name()
                    + " was being made durable; it may land whole, torn or not at all");
        }
        Pending mine = pending.remove(pending.size() - 1);
        below.writeDurable(mine.pos, ByteBuffer.wrap(mine.data));
        long from = mine.pos;
        long to = mine.pos + mine.data.length;
        List<Pending> rest = new ArrayList<>(pending.size());
        for (Pending p : pending) { // what it overwrote can no longer land over it
            long pEnd = p.pos + p.data.length;
            if (pEnd <= from || p.pos >= to) {
                rest.add(p);
                continue;
            }
            if (p.pos < from) {
                rest.add(new Pending(p.pos, Arrays.copyOfRange(p.data, 0, (int) (from - p.pos))));
            }
            if (pEnd > to) {
                rest.add(new Pending(to, Arrays.copyOfRange(p.data, (int) (to - p.pos), p.data.length)));
            }
        }
        pending.clear();
        pending.addAll(rest);
    }

    private boolean reachesCut() {
        if (untilCut > 0 && --untilCut == 0) {
            cut = true;
            return true;
        }
        return false;
    }

    private void ensurePowered() {
        if (cut) {
            throw new SimulatedCrashException("power already lost on " + below.name());
        }
    }

    /**
     * Loses power: applies a seeded selection of the pending writes to the device below and closes
     * this one. Reopen the store on {@link #underlying()}.
     */
    public CrashReport crash(long seed) {
        return crash(seed, false);
    }

    /** As {@link #crash(long)}; with {@code forceTear}, one pending write (if any) is always torn. */
    public synchronized CrashReport crash(long seed, boolean forceTear) {
        SplittableRandom r = new SplittableRandom(seed);
        int n = pending.size();
        int torn = n == 0 ? -1 : forceTear ? r.nextInt(n) : r.nextInt(n + 1) - 1; // -1: none torn
        int kept = 0;
        int unitsKept = 0;
        int unitsDropped = 0;
        for (int i = 0; i < n; i++) {
            Pending p = pending.get(i);
            if (i == torn) {
                long end = p.pos + p.data.length;
                for (long from = p.pos; from < end;) {
                    long to = Math.min(end, (from / tearUnit + 1) * tearUnit); // aligned to absolute offsets
                    if (r.nextBoolean()) {
                        below.write(from, ByteBuffer.wrap(p.data, (int) (from - p.pos), (int) (to - from)));
                        unitsKept++;
                    } else {
                        unitsDropped++;
                    }
                    from = to;
                }
            } else if (r.nextBoolean()) {
                below.write(p.pos, ByteBuffer.wrap(p.data));
                kept++;
            }
        }
        pending.clear();
        closed = true;
        int wholeDecided = torn >= 0 ? n - 1 : n;
        return new CrashReport(n, kept, wholeDecided - kept, unitsKept, unitsDropped);
    }

    /**
     * Loses power keeping exactly the pending bytes whose tear unit {@code keep} accepts (by the
     * unit's absolute offset), in the order they were written: one crash state, chosen by a test
     * that needs it, among those {@link #crash(long)} may pick.
     */
    public synchronized CrashReport crashKeeping(java.util.function.LongPredicate keep) {
        int n = pending.size();
        int unitsKept = 0;
        int unitsDropped = 0;
        for (Pending p : pending) {
            long end = p.pos + p.data.length;
            for (long from = p.pos; from < end;) {
                long to = Math.min(end, (from / tearUnit + 1) * tearUnit);
                if (keep.test(from / tearUnit * tearUnit)) {
                    below.write(from, ByteBuffer.wrap(p.data, (int) (from - p.pos), (int) (to - from)));
                    unitsKept++;
                } else {
                    unitsDropped++;
                }
                from = to;
            }
        }
        pending.clear();
        closed = true;
        return new CrashReport(n, 0, 0, unitsKept, unitsDropped);
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
