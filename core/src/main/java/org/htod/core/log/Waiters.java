package org.htod.core.log;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The writers waiting in {@link Log#awaitDurable} while another thread leads a group commit, each
 * on its own state (yielding, then parked with {@link LockSupport}: {@link #await}) instead of on
 * the log's monitor.
 *
 * <p>Why: with one {@code notifyAll} per commit, every waiter woke, and each had to take the
 * monitor again, one after another, to find out whether the commit covered it, while the next
 * leader and the writers appending their next records queued for the same monitor. On 16 cores
 * with 64 writers, the log alone then carried only 7 records a commit. Here the leader that
 * finishes a commit marks each waiter it covered as {@link #DURABLE}, and that waiter returns
 * without the monitor. Of the waiters it did not cover, it wakes one (the heir) to lead the
 * next group; the others stay parked until a commit covers them.
 *
 * <p>Guarded by the log's monitor, except {@link Waiter#state}, which a waiter reads without it,
 * and {@link #yieldCredit}. Threads are unparked outside the monitor where the caller can, so
 * that a woken thread never waits for the monitor its waker still holds.
 */
final class Waiters {
    /** Still waiting. */
    static final int WAITING = 0;
    /** A commit covered the waiter's record: it returns. */
    static final int DURABLE = 1;
    /** The waiter looks again under the monitor: it leads the next group, or its record was dropped, or the log is unusable. */
    static final int AGAIN = 2;

    /** One thread waiting until the stream is durable up to {@link #upTo} in {@link #generation}. */
    static final class Waiter {
        final Thread thread = Thread.currentThread();
        final long upTo;
        final long generation;
        volatile int state = WAITING;

        Waiter(long upTo, long generation) {
            this.upTo = upTo;
            this.generation = generation;
        }
    }

    /** The longest a waiter yields before it parks: about a commit on a fast disk. */
    static final long MAX_YIELD_NANOS = 100_000;
    /** A yield longer than this ran another thread on the waiter's processor. */
    static final long SLOW_YIELD_NANOS = 3_000;
    /** Slow yields after which a waiter parks: one alone is common (a short job got the processor). */
    static final int SLOW_YIELDS = 3;
    /** One wait in this many tries yielding whatever {@link #yieldCredit} says, and updates it. */
    static final int SAMPLE = 256;
    /** A sample's weight in {@link #yieldCredit}: with the decay of a 1,024th it stays below 2^27. */
    private static final int CREDIT_STEP = 1 << 17;

    /**
     * The clock and the yield {@link #await} uses, and whether a wait is a sample: the machine's
     * ({@link #MACHINE}), or a test's, which drives the clock to make yields slow or fast.
     */
    interface Scheduling {
        long nanoTime();

        void yieldProcessor();

        boolean sample();
    }

    private static final Scheduling MACHINE = new Scheduling() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void yieldProcessor() {
            Thread.yield();
        }

        @Override
        public boolean sample() {
            return ThreadLocalRandom.current().nextInt(SAMPLE) == 0;
        }
    };

    /**
     * Positive while yielding has ended waits before {@link #MAX_YIELD_NANOS} lately, negative
     * while it has not; {@link #await} skips yielding when it is negative. Read and written
     * without the monitor: a lost update costs one sample.
     */
    private volatile int yieldCredit;

    /**
     * Waits that were over before they began, that ended while yielding, and that went on to park
     * (or found themselves woken just before): see {@link #counts}.
     */
    private final LongAdder atOnce = new LongAdder();
    private final LongAdder yielded = new LongAdder();
    private final LongAdder parked = new LongAdder();

    private List<Waiter> list = new ArrayList<>();
    private List<Waiter> next = new ArrayList<>();
    /** The waiter woken to lead the next group and not yet back under the monitor, or null. */
    private Waiter heir;
    /** The machine's clock and yield, or a test's. */
    private final Scheduling scheduling;

    Waiters() {
        this(MACHINE);
    }

    Waiters(Scheduling scheduling) {
        this.scheduling = scheduling;
    }

    /** The calling thread waits for {@code upTo}; it waits in {@link #await} after leaving the monitor. */
    Waiter add(long upTo, long generation) {
        Waiter w = new Waiter(upTo, generation);
        list.add(w);
        return w;
    }

    /** {@code w} is back under the monitor after its wait: if it was the heir, it is no longer. */
    void back(Waiter w) {
        if (heir == w) {
            heir = null;
        }
    }

    /**
     * The waiters to wake now that the log is durable up to {@code durable} in {@code generation}:
     * those it covers, those of another generation (their records were dropped), all of them if
     * {@code all} (the log became unusable); and, when {@code leaderFree} and no heir is on its
     * way, the first of the rest, to lead the next group. Each is marked and leaves the list; the
     * heir comes first in the answer, so that it is unparked first.
     */
    List<Waiter> wake(long durable, long generation, boolean leaderFree, boolean all) {
        if (list.isEmpty()) {
            return List.of();
        }
        List<Waiter> out = new ArrayList<>();
        List<Waiter> stay = next;
        for (Waiter w : list) {
            if (all || w.generation != generation) {
                w.state = AGAIN;
                out.add(w);
            } else if (w.upTo <= durable) {
                w.state = DURABLE;
                out.add(w);
            } else {
                stay.add(w);
            }
        }
        if (leaderFree && heir == null && !stay.isEmpty()) {
            heir = stay.remove(0);
            heir.state = AGAIN;
            out.add(0, heir);
        }
        next = list;
        next.clear();
        list = stay;
        return out;
    }

    /** Unparks the threads {@link #wake} chose, in its order. */
    static void unpark(List<Waiter> woken) {
        for (Waiter w : woken) {
            LockSupport.unpark(w.thread);
        }
    }

    /**
     * Waits until {@code w} is woken or the thread is interrupted (its interrupt status stays
     * set); returns the state {@code w} is in then.
     *
     * <p>Why not park at once: a commit on a fast disk takes tens of microseconds, and a parked
     * thread needs a system call to be woken and then a scheduler's pass before it runs, several
     * microseconds each; the leader unparks the writers it covered one after another, so on a
     * machine with idle processors the last of 64 is back long after the next commit began, and
     * groups stay small. A waiter therefore yields for up to {@link #MAX_YIELD_NANOS} (a woken
     * waiter that never parked costs its waker no system call), and parks only then. Yielding
     * pays only while processors are free: a yield that takes longer than {@link
     * #SLOW_YIELD_NANOS} ran another thread, and after {@link #SLOW_YIELDS} of them the waiter
     * parks. Whether yielding paid is remembered ({@link #yieldCredit}), so that where it does
     * not (more writers than processors) waiters park at once, but for one wait in {@link
     * #SAMPLE}, which tries again. The scheme of RocksDB's write thread, less its spin.
     */
    int await(Waiter w, Object blocker) {
        // No busy spin first, as RocksDB's writers do for a microsecond: a commit takes tens of
        // microseconds at best, and on 2 cores such a spin took 6% of the processor samples of 64
        // writers while ending 6 waits in 243,824.
        int first = w.state;
        if (first != WAITING) {
            atOnce.increment();
            return first;
        }
        boolean sampled = scheduling.sample();
        boolean learn = sampled;
        boolean paid = false;
        if (sampled || yieldCredit >= 0) {
            long begin = scheduling.nanoTime();
            long last = begin;
            int slow = 0;
            while (last - begin <= MAX_YIELD_NANOS && !Thread.currentThread().isInterrupted()) {
                scheduling.yieldProcessor();
                if (w.state != WAITING) {
                    paid = true;
                    break;
                }
                long now = scheduling.nanoTime();
                if (now - last >= SLOW_YIELD_NANOS && ++slow >= SLOW_YIELDS) {
                    learn = true; // others need the processors: park, and say so at once
                    break;
                }
                last = now;
            }
        }
        if (learn) {
            // An exponential average in fixed point: each sample moves it by a 1,024th, up if the
            // yields ended the wait, down if not; before parking, so that the other waiters know
            // at once. Racing waiters may lose a sample: it is a guess.
            int v = yieldCredit;
            yieldCredit = v - v / 1024 + (paid ? CREDIT_STEP : -CREDIT_STEP);
        }
        if (paid) {
            yielded.increment();
            return w.state;
        }
        parked.increment();
        int s;
        while ((s = w.state) == WAITING && !Thread.currentThread().isInterrupted()) {
            LockSupport.park(blocker);
        }
        return s;
    }

    /** Whether waits yield first now ({@link #yieldCredit} not negative); for the tests. */
    boolean yielding() {
        return yieldCredit >= 0;
    }

    /** How the waits so far ended: over before they began, while yielding, parked; read without the monitor. */
    long[] counts() {
        return new long[] {atOnce.sum(), yielded.sum(), parked.sum()};
    }

    boolean isEmpty() {
        return list.isEmpty();
    }
}
