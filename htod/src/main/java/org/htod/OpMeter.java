package org.htod;

import java.util.concurrent.atomic.LongAdder;

/**
 * The operations of a store's maps, counted for {@link HtodStore#stats()}, and timed only while a
 * listener is attached ({@link HtodMetrics}): without one, an operation costs two {@link
 * LongAdder} increments at most and no clock read.
 */
final class OpMeter {
    /** What an operation did. */
    enum Op { GET, PUT, REMOVE }

    /** Receives the time of each operation while attached. */
    interface Listener {
        void timed(Op op, long nanos);
    }

    private final LongAdder gets = new LongAdder();
    private final LongAdder puts = new LongAdder();
    private final LongAdder removes = new LongAdder();
    private final LongAdder unchanged = new LongAdder();
    private volatile Listener listener;

    /** A start time for {@link #done}: 0 when no listener is attached, so that nothing reads the clock. */
    long start() {
        return listener == null ? 0 : System.nanoTime();
    }

    /** Counts {@code n} operations {@code op} that began at {@code start} (timed once, as one call). */
    void done(Op op, long n, long start) {
        switch (op) {
            case GET -> gets.add(n);
            case PUT -> puts.add(n);
            case REMOVE -> removes.add(n);
        }
        Listener l = listener;
        if (start != 0 && l != null) {
            l.timed(op, System.nanoTime() - start);
        }
    }

    /** A conditional update that found nothing to do ({@code putIfAbsent} on a present key, say). */
    void unchanged() {
        unchanged.increment();
    }

    /** Attaches {@code l} besides any listener already attached. */
    synchronized void attach(Listener l) {
        Listener old = listener;
        listener = old == null ? l : (op, nanos) -> {
            old.timed(op, nanos);
            l.timed(op, nanos);
        };
    }

    StoreStats.Operations counts() {
        return new StoreStats.Operations(gets.sum(), puts.sum(), removes.sum(), unchanged.sum());
    }
}
