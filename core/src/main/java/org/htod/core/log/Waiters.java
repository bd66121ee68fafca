package org.htod.core.log;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The writers waiting in {@link Log#awaitDurable} while another thread leads a group commit, each
 * parked on its own ({@link LockSupport}) instead of on the log's monitor.
 *
 * <p>Why: with one {@code notifyAll} per commit, every waiter woke, and each had to take the
 * monitor again, one after another, to find out whether the commit covered it, while the next
 * leader and the writers appending their next records queued for the same monitor. On 16 cores
 * with 64 writers, the log alone then carried only 7 records a commit. Here the leader that
 * finishes a commit marks each waiter it covered as {@link #DURABLE}, and that waiter returns
 * without the monitor. Of the waiters it did not cover, it wakes one (the heir) to lead the
 * next group; the others stay parked until a commit covers them.
 *
 * <p>Guarded by the log's monitor, except {@link Waiter#state}, which a parked waiter reads
 * without it. Threads are unparked outside the monitor where the caller can, so that a woken
 * thread never waits for the monitor its waker still holds.
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

    private List<Waiter> list = new ArrayList<>();
    private List<Waiter> next = new ArrayList<>();
    /** The waiter woken to lead the next group and not yet back under the monitor, or null. */
    private Waiter heir;

    /** The calling thread waits for {@code upTo}; it parks with {@link #park} after leaving the monitor. */
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

    /** {@code w} gives up waiting (interrupted): it leaves the list. */
    void remove(Waiter w) {
        list.remove(w);
        back(w);
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
     * Parks until {@code w} is woken or the thread is interrupted (its interrupt status stays
     * set); returns the state {@code w} is in then.
     */
    static int park(Waiter w, Object blocker) {
        int s;
        while ((s = w.state) == WAITING && !Thread.currentThread().isInterrupted()) {
            LockSupport.park(blocker);
        }
        return s;
    }

    boolean isEmpty() {
        return list.isEmpty();
    }
}
