package org.htod.core.device;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Reads of a file served from read-only memory mappings of it: a copy out of the page cache, with
 * no system call and none of the JDK's per-read channel bookkeeping (two monitor enters in {@code
 * FileChannel}'s positional read). Writes still go through the channel; on Linux a shared mapping
 * and {@code pwrite} see the same page cache, so a read after a write, ordered by the caller's
 * locks, sees it.
 *
 * <p>Each mapping is made through a read-only descriptor of the file, which the device keeps
 * open beside its others ({@code LockedChannel#openExtra}). A shared mapping of the store's
 * read-write channel is marked shared and writable in the kernel ({@code VM_SHARED}), and for
 * each page it writes back Linux walks the page tables of every such mapping over the page, to
 * write-protect it ({@code folio_mkclean}): a tenth of the flusher's processor time at 64 writers
 * of 4,000-byte values, multiplied by the older, shorter mappings a segment keeps (below). A
 * mapping of a descriptor that cannot write is not marked so, and that walk passes it by.
 *
 * <p>The file is mapped in segments of {@value #SEGMENT_SHIFT}-bit size (1 GiB; a {@code
 * ByteBuffer} indexes at most 2 GiB), each up to what is known written: the file's size at open,
 * then the furthest end of a write ({@link #grew}). A mapping never reaches past the file's end,
 * since touching such a page kills the read with {@code SIGBUS}; a first mapping takes what there
 * is. A read the mappings cannot serve (past what is mapped, straddling two segments, after close)
 * returns false and the caller reads through the channel, which also finds the file's end. As
 * the file grows, a segment is mapped again, longer, once it has grown by {@value #MIN_GROWTH}
 * bytes or an eighth (so about fifty mappings take a segment to its full size); the shorter ones
 * stay mapped until close, since a reader may still be copying out of one.
 *
 * <p>Only while the file is at most {@link #limitFor} bytes (half the memory): beyond, a fault
 * would read ahead far more than a random read uses, and every read goes through the channel.
 *
 * <p>Unmapping memory a thread still reads crashes the JVM rather than throwing, so {@link #close}
 * unmaps only once no read is in flight: each read announces itself in one of {@value #SLOTS}
 * striped counters (one cache line each, picked by the thread) and then checks {@code closed};
 * close sets {@code closed} and then waits for every counter to be zero. Both sides use volatile
 * accesses, so either the read sees {@code closed} or close sees the read.
 *
 * <p>Locks: {@code this} guards mapping (a segment mapped again) and unmapping; reads take none.
 */
final class MappedReads {
    static final int SEGMENT_SHIFT = 30;
    static final long SEGMENT = 1L << SEGMENT_SHIFT;
    static final long MIN_GROWTH = 1 << 20;
    private static final int SLOTS = 64;
    /** Longs between two counters: 128 bytes, so that no two share a cache line (or its neighbour, which x86 prefetches). */
    private static final int STRIDE = 16;
    /** {@code Unsafe.invokeCleaner}, looked up at run time (no proprietary API named in code), or null where missing. */
    private static final MethodHandle UNMAP = unmapper();

    /** Maps a range of the file, read-only, through a read-only descriptor. */
    private final Mapper mapper;
    /**
     * Most bytes the file may hold for reads to be served from mappings: past it, every read goes
     * through the channel (see {@link #limitFor}).
     */
    private final long limit;
    /** The longest mapping of each segment (null where none yet); replaced whole under {@code this}, read without it. */
    private volatile MappedByteBuffer[] segments = new MappedByteBuffer[0];
    /** Every mapping made, to unmap at close; guarded by {@code this}. */
    private final List<MappedByteBuffer> mappings = new ArrayList<>();
    /** Bytes from the file's start known to exist: its size at open, then the furthest end of a write. */
    private final AtomicLong known;
    private final AtomicLongArray readers = new AtomicLongArray(SLOTS * STRIDE);
    private volatile boolean closed;

    /**
     * Maps {@code size} bytes of the file from {@code pos}, read-only; the file device maps
     * through a channel opened read-only, so that the mapping is not a writable one (see the
     * class comment).
     */
    interface Mapper {
        MappedByteBuffer map(long pos, long size) throws IOException;
    }

    MappedReads(Mapper mapper, long size, long limit) {
        this.mapper = mapper;
        this.known = new AtomicLong(size);
        this.limit = limit;
    }

    /**
     * The largest file whose reads are mapped: half the memory of the machine or of the
     * container the JVM runs in (as the JVM reports it), or no limit where it cannot tell. A
     * page a mapping touches that is not in memory is read by a fault, and the kernel reads ahead
     * around it (without {@code madvise(MADV_RANDOM)}, which Java 17 cannot ask for), so random
     * reads of a file much larger than memory would read far more than they use: LMDB, read-ahead
     * on, fell to under a hundred reads a second beyond memory in this project's benchmarks. A
     * positional read of the channel reads what it asks for.
     */
    static long limitFor() {
        try {
            java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
                long total = sun.getTotalMemorySize();
                if (total > 0) {
                    return total / 2;
                }
            }
        } catch (LinkageError | RuntimeException e) {
            // a runtime without the management modules: no limit known
        }
        return Long.MAX_VALUE;
    }

    /**
     * Whether this JDK can map reads: it must unmap at close, which Java 17 allows only through
     * {@code Unsafe.invokeCleaner}. From Java 24 on that method is terminally deprecated and each
     * JVM warns on its first call, so there reads go through the channel (a mapping there would be
     * unmapped through the foreign-memory API, not built yet).
     */
    static boolean supported() {
        return UNMAP != null && Runtime.version().feature() < 24;
    }

    /** After a write through the channel that ended at {@code end}: the file holds at least that much. */
    void grew(long end) {
        if (end > known.get()) {
            known.accumulateAndGet(end, Math::max);
        }
    }

    /**
     * Copies {@code dst.remaining()} bytes at {@code pos} into {@code dst} from a mapping,
     * advancing its position; false, with {@code dst} untouched, where the mappings do not hold
     * them.
     */
    boolean read(long pos, ByteBuffer dst) {
        int len = dst.remaining();
        long end = pos + len;
        int seg = (int) (pos >>> SEGMENT_SHIFT);
        if (len == 0 || pos < 0 || ((end - 1) >>> SEGMENT_SHIFT) != seg || known.get() > limit) {
            return false;
        }
        int slot = (Thread.currentThread().hashCode() & (SLOTS - 1)) * STRIDE;
        readers.getAndIncrement(slot);
        try {
            if (closed) {
                return false;
            }
            int at = (int) (pos & (SEGMENT - 1));
            MappedByteBuffer[] s = segments;
            MappedByteBuffer m = seg < s.length ? s[seg] : null;
            if (m == null || at + len > m.capacity()) {
                m = mapLonger(seg, end);
                if (m == null) {
                    return false;
                }
            }
            dst.put(dst.position(), m, at, len);
            dst.position(dst.position() + len);
            return true;
        } finally {
            readers.getAndDecrement(slot);
        }
    }

    /**
     * The mapping of segment {@code seg} that reaches {@code end}, mapped now if the file is known
     * to reach it and has grown enough since the segment's last mapping; else null.
     */
    private synchronized MappedByteBuffer mapLonger(int seg, long end) {
        if (closed) {
            return null;
        }
        MappedByteBuffer[] s = segments;
        MappedByteBuffer m = seg < s.length ? s[seg] : null;
        long base = (long) seg << SEGMENT_SHIFT;
        long have = m == null ? 0 : m.capacity();
        if (end - base <= have) {
            return m; // another reader mapped it meanwhile
        }
        long size = known.get();
        long want = Math.min(SEGMENT, size - base);
        if (end > size || (have > 0 && want < SEGMENT && want - have < Math.max(MIN_GROWTH, have / 8))) {
            return null;
        }
        MappedByteBuffer longer;
        boolean interrupted = Thread.interrupted(); // pending, it would close the channel at once
        try {
            longer = mapper.map(base, want);
        } catch (IOException | RuntimeException e) {
            return null; // read through the channel instead; a later mapping tries again
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        mappings.add(longer);
        MappedByteBuffer[] next = java.util.Arrays.copyOf(s, Math.max(s.length, seg + 1));
        next[seg] = longer;
        segments = next;
        return longer;
    }

    /** Bytes of the file the mappings cover now (the longest mapping of each segment). */
    synchronized long mappedBytes() {
        long n = 0;
        for (MappedByteBuffer m : segments) {
            n += m == null ? 0 : m.capacity();
        }
        return n;
    }

    /** Unmaps every mapping once no read is in flight; later reads return false. Idempotent. */
    void close() {
        closed = true;
        for (int i = 0; i < SLOTS; i++) {
            while (readers.get(i * STRIDE) != 0) {
                Thread.yield(); // a read in flight copies at most one entry's bytes, or maps a segment
            }
        }
        synchronized (this) {
            segments = new MappedByteBuffer[0];
            if (UNMAP != null) {
                for (MappedByteBuffer m : mappings) {
                    try {
                        UNMAP.invoke(m);
                    } catch (Throwable e) {
                        throw new IllegalStateException("cannot unmap a mapping of the store's file", e);
                    }
                }
            }
            mappings.clear();
        }
    }

    private static MethodHandle unmapper() {
        try {
            Class<?> unsafe = Class.forName("sun.misc.Unsafe");
            Field f = unsafe.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            MethodHandle m = MethodHandles.lookup().findVirtual(unsafe, "invokeCleaner",
                    MethodType.methodType(void.class, ByteBuffer.class));
            return m.bindTo(f.get(null)).asType(MethodType.methodType(void.class, MappedByteBuffer.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
