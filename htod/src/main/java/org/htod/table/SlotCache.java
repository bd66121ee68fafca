package org.htod.table;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bucket slots of a store's tables held in memory, 8 bytes per bucket (the handle; its check
 * is verified once, when the segment is read), so that a lookup reads no slot from the device.
 * One {@link Segment} per bucket-array segment block, shared by every {@link BucketArray} object
 * naming that block, loaded whole on first use (one read of the segment, every slot checked).
 *
 * <p>It stays equal to the disk because every write of a slot goes through {@link
 * Segment#write} or {@link Segment#writeRun}: a flush's links ({@link SyncGate#writeNow}, and a
 * run of them in one write), {@link BucketArray#set} and {@link BucketArray#setRun}. A run also
 * writes the slots between its links, from the copy: so the copy must never be older than the
 * disk, which this order guarantees. A segment's lock is held across the device write and the update of the
 * copy, and across the load, so a load never publishes a slot older than a write that finished
 * before it, whatever stripe wrote it. A reader reads the copy without that lock: it holds the
 * view read lock of its bucket's stripe, under whose write side every write of that bucket's slot
 * happens (or, for a new array, before the shape that makes it visible is published under every
 * view lock), which orders the reader after the write. A slot whose link waits in the gate is
 * read from the gate first, as from the disk.
 *
 * <p>A segment block freed is dropped first ({@link #drop}); a segment block allocated starts
 * with a fresh, all-zero copy ({@link #fresh}), so a reused handle never finds old slots. Bounded
 * by {@code budget} bytes: a segment that would exceed it is not held, and its slots are read
 * from the device as before. A failed slot write forgets the segment's copy, which the next
 * reader loads again from the disk, checked.
 */
final class SlotCache {
    private final long budget;
    private final AtomicLong used = new AtomicLong();
    private final ConcurrentHashMap<Long, Segment> segments = new ConcurrentHashMap<>();

    /** A cache of at most {@code budget} bytes of slots; 0 holds none. */
    SlotCache(long budget) {
        this.budget = budget;
    }

    /** The copy of one segment block's slots. */
    final class Segment {
        private final long handle;
        /** The handles of the slots, or null while not held. Written under this object's lock. */
        private volatile long[] slots;

        private Segment(long handle) {
            this.handle = handle;
        }

        /** The slot {@code i}'s handle if held, else -1 (a handle is never negative: its address is below 2^39). */
        long get(int i) {
            long[] s = slots;
            return s == null ? -1 : s[i];
        }

        /**
         * Loads the copy with {@code reader} (which reads and checks every slot of the segment)
         * if it is not held and the budget allows; returns it, or null.
         */
        synchronized long[] load(int count, java.util.function.Supplier<long[]> reader) {
            long[] s = slots;
            if (s != null) {
                return s;
            }
            long bytes = 8L * count;
            if (segments.get(handle) != this || !reserve(bytes)) { // a dropped segment is held no more
                return null;
            }
            try {
                s = reader.get();
            } catch (RuntimeException e) {
                used.addAndGet(-bytes);
                throw e;
            }
            slots = s;
            return s;
        }

        /**
         * Writes slots {@code first ..} with {@code write} (the device write) and then the copy;
         * a failed write forgets the copy.
         */
        synchronized void write(int first, long[] values, Runnable write) {
            try {
                write.run();
            } catch (RuntimeException e) {
                forget();
                throw e;
            }
            long[] s = slots;
            if (s != null) {
                System.arraycopy(values, 0, s, first, values.length);
            }
        }

        /**
         * Writes the slots from {@code first} on as one run, if the copy is held: slot {@code first
         * + k} gets {@code targets[k]}, or where that is negative the value the copy holds, which is
         * the disk's under this lock, so the slots the run passes over are written back as they
         * are. {@code write} gets the values and makes the device write; then the copy takes them. A
         * failed write forgets the copy. Returns false, writing nothing, if the copy is not held.
         */
        synchronized boolean writeRun(int first, long[] targets, java.util.function.Consumer<long[]> write) {
            long[] s = slots;
            if (s == null) {
                return false;
            }
            long[] values = new long[targets.length];
            for (int k = 0; k < values.length; k++) {
                values[k] = targets[k] >= 0 ? targets[k] : s[first + k];
            }
            try {
                write.accept(values);
            } catch (RuntimeException e) {
                forget();
                throw e;
            }
            System.arraycopy(values, 0, s, first, values.length);
            return true;
        }

        /** Holds an all-zero copy of {@code count} slots, for a segment just written empty. */
        synchronized void zero(int count) {
            forget();
            long bytes = 8L * count;
            if (reserve(bytes)) {
                slots = new long[count];
            }
        }

        synchronized void forget() {
            long[] s = slots;
            if (s != null) {
                slots = null;
                used.addAndGet(-8L * s.length);
            }
        }
    }

    private boolean reserve(long bytes) {
        while (true) {
            long u = used.get();
            if (u + bytes > budget) {
                return false;
            }
            if (used.compareAndSet(u, u + bytes)) {
                return true;
            }
        }
    }

    /** The segment of block {@code handle}, shared by every array naming it. */
    Segment of(long handle) {
        return segments.computeIfAbsent(handle, Segment::new);
    }

    /** A segment block just allocated and written with {@code count} empty slots. */
    Segment fresh(long handle, int count) {
        Segment s = of(handle);
        s.zero(count);
        return s;
    }

    /** Forgets the copy of block {@code handle}'s slots, if it is a segment held: the next reader loads it from the disk. */
    void forget(long handle) {
        Segment s = segments.get(handle);
        if (s != null) {
            s.forget();
        }
    }

    /** Block {@code handle} is about to be freed: forget its slots, if it is a segment. */
    void drop(long handle) {
        Segment s = segments.remove(handle);
        if (s != null) {
            s.forget();
        }
    }

    /** Forgets every segment: the store closed (see {@link TableStore#dropCaches}). */
    void clear() {
        for (Long handle : segments.keySet()) {
            drop(handle);
        }
    }

    /** Bytes of slots held. */
    long bytes() {
        return used.get();
    }

    /** The most bytes of slots it holds. */
    long budget() {
        return budget;
    }
}
