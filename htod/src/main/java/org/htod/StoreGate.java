package org.htod;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The gate every operation of a store passes, so that an online compaction can hold operations
 * off while it swaps the store's file: {@link #enter} and {@link #exit} around each operation
 * (shared, cheap), {@link #acquire} and {@link #release} around a swap (exclusive: it waits for
 * the operations inside to leave, and holds new ones at the gate until it is released).
 *
 * <p>Entering costs an increment of a counter picked by the thread (one of several, each on its
 * own cache line, so that readers on different cores do not contend) and a read of a volatile
 * field; no lock is taken unless an exclusive holder is there or waiting. The exclusive holder
 * announces itself in {@link #owner} and then waits until every counter is zero; an entering
 * thread increments its counter and then reads {@link #owner}, and backs out if it sees one. Both
 * sides write, then read, volatile state, so at least one of them sees the other.
 *
 * <p>Entering is reentrant (a thread already inside passes at once, without counting again), and
 * the exclusive holder passes at once too: an operation may call another, and the swap may use
 * the store's own methods. A thread inside may not {@link #acquire}: it would wait for itself.
 *
 * <p>Lock order, outermost first: {@link #exclusive} (one exclusive holder at a time), then the
 * gate itself (held shared by operations, exclusively by a swap), then whatever the store's
 * operations take inside (the write layer's locks, see {@code WriteLayer}). {@link #lock} only
 * guards the waits of this class and is never held while anything else is taken.
 */
final class StoreGate {
    /** Longs between two counters: 128 bytes, so that no two share a cache line (or its neighbour). */
    private static final int PAD = 16;
    private final int stripes;
    private final AtomicLongArray counts;
    private final ReentrantLock exclusive = new ReentrantLock();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** The thread holding the gate exclusively, or null. */
    private volatile Thread owner;
    /** Per thread: depth of entries, whether the outermost one counted, and the thread's counter. */
    private final ThreadLocal<int[]> local;

    StoreGate() {
        int n = Integer.highestOneBit(Math.max(1, Math.min(64, Runtime.getRuntime().availableProcessors() * 2)) * 2 - 1);
        this.stripes = n;
        this.counts = new AtomicLongArray(n * PAD);
        this.local = ThreadLocal.withInitial(() -> {
            long id = System.identityHashCode(Thread.currentThread());
            int h = (int) ((id * 0x9E3779B97F4A7C15L) >>> 40);
            return new int[] {0, 0, (h & (stripes - 1)) * PAD};
        });
    }

    /** Enters the gate for one operation: waits while a swap holds it. Pair with {@link #exit}. */
    void enter() {
        int[] t = local.get();
        if (t[0] > 0) {
            t[0]++;
            return;
        }
        Thread me = Thread.currentThread();
        if (owner == me) {
            t[0] = 1;
            t[1] = 0;
            return;
        }
        int i = t[2];
        while (true) {
            counts.incrementAndGet(i);
            if (owner == null) {
                t[0] = 1;
                t[1] = 1;
                return;
            }
            counts.decrementAndGet(i);
            lock.lock();
            try {
                changed.signalAll(); // the holder may be waiting for this counter to drop
                while (owner != null) {
                    changed.awaitUninterruptibly();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** Leaves the gate after an operation. */
    void exit() {
        int[] t = local.get();
        if (t[0] <= 0) {
            throw new IllegalStateException("exit without enter");
        }
        if (--t[0] > 0 || t[1] == 0) {
            return;
        }
        t[1] = 0;
        counts.decrementAndGet(t[2]);
        if (owner != null) {
            lock.lock();
            try {
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Whether the calling thread is inside the gate. */
    boolean inside() {
        return local.get()[0] > 0;
    }

    /** How long new operations are held at the gate at a time while one inside does not leave. */
    private static final long HOLD_OFF_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /**
     * Takes the gate exclusively: waits for the operations inside to leave; new ones wait at the
     * gate. While one inside does not leave within {@link #HOLD_OFF_NANOS} (a {@code copyTo}, a
     * {@code verify}, which hold the gate for their whole run), new operations are let through
     * again for as long, and the holder looks again: held at the gate until that operation ended,
     * every operation of the store waited for it (a get, 20 s behind a copy).
     */
    void acquire() {
        if (inside()) {
            throw new IllegalStateException("an operation of the store cannot hold its gate exclusively");
        }
        exclusive.lock();
        lock.lock();
        try {
            while (true) {
                owner = Thread.currentThread();
                long deadline = System.nanoTime() + HOLD_OFF_NANOS;
                while (inFlight() != 0 && System.nanoTime() < deadline) {
                    changed.await(10, TimeUnit.MILLISECONDS);
                }
                if (inFlight() == 0) {
                    return;
                }
                owner = null;
                changed.signalAll();
                changed.await(HOLD_OFF_NANOS, TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            release();
            throw new org.htod.core.HtodException("interrupted while waiting for the store's operations", e);
        } finally {
            lock.unlock();
        }
    }

    /** Lets operations through again. */
    void release() {
        owner = null;
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        exclusive.unlock();
    }

    private long inFlight() {
        long n = 0;
        for (int i = 0; i < stripes; i++) {
            n += counts.get(i * PAD);
        }
        return n;
    }
}
