package org.htod.core.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How {@link Waiters#await} learns whether yielding pays, on a clock and a yield the test drives:
 * slow yields make a waiter park and later waits skip yielding; a sampled wait that yielding ends
 * turns yielding back on; a wait that outlasts the yield window parks without a verdict.
 */
class WaitersYieldTest {
    /** Each yield moves the clock by {@link #perYield} and then runs {@link #onYield}; samples as told. */
    private static final class Driven implements Waiters.Scheduling {
        volatile long now;
        volatile long perYield;
        volatile boolean sample;
        volatile Runnable onYield = () -> { };
        final AtomicInteger yields = new AtomicInteger();

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void yieldProcessor() {
            yields.incrementAndGet();
            now += perYield;
            onYield.run();
        }

        @Override
        public boolean sample() {
            return sample;
        }
    }

    /** A waiter on a thread of its own. */
    private record Waiting(Thread thread, CompletableFuture<Integer> state) {}

    private final Driven driven = new Driven();
    private final Waiters waiters = new Waiters(driven);

    private Waiting startWaiting(long upTo) {
        CompletableFuture<Integer> state = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            Waiters.Waiter w;
            synchronized (waiters) {
                w = waiters.add(upTo, 0); // names the thread that adds it, to be unparked
            }
            state.complete(waiters.await(w, this));
        });
        t.start();
        return new Waiting(t, state);
    }

    private void wakeUpTo(long durable) {
        synchronized (waiters) {
            Waiters.unpark(waiters.wake(durable, 0, false, false));
        }
    }

    private int end(Waiting w) throws Exception {
        int s = w.state.get(20, TimeUnit.SECONDS);
        w.thread.join();
        return s;
    }

    @Test
    @Timeout(60)
    void slowYieldsMakeAWaiterParkAndLaterWaitsSkipYielding() throws Exception {
        driven.perYield = Waiters.SLOW_YIELD_NANOS + 2_000; // each yield ran another thread
        assertTrue(waiters.yielding(), "a new log's waiters yield first");
        Waiting first = startWaiting(1);
        WaitersTest.untilParked(first.thread);
        assertEquals(Waiters.SLOW_YIELDS, driven.yields.get(), "it parked at the third slow yield");
        assertFalse(waiters.yielding(), "and said that yielding does not pay");
        wakeUpTo(1);
        assertEquals(Waiters.DURABLE, end(first));

        Waiting second = startWaiting(2); // not a sample: it does not try
        WaitersTest.untilParked(second.thread);
        assertEquals(Waiters.SLOW_YIELDS, driven.yields.get(), "no yield before parking");
        wakeUpTo(2);
        assertEquals(Waiters.DURABLE, end(second));
        assertArrayEquals(new long[] {0, 0, 2}, waiters.counts());
    }

    @Test
    @Timeout(60)
    void aSampledWaitThatYieldingEndsTurnsYieldingBackOn() throws Exception {
        driven.perYield = Waiters.SLOW_YIELD_NANOS + 2_000;
        Waiting slow = startWaiting(1);
        WaitersTest.untilParked(slow.thread);
        wakeUpTo(1);
        end(slow);
        assertFalse(waiters.yielding());

        driven.perYield = 100; // a free processor: yields return at once
        driven.sample = true;
        AtomicInteger calls = new AtomicInteger();
        driven.onYield = () -> {
            if (calls.incrementAndGet() == 2) {
                wakeUpTo(2); // the commit covering it ends while it yields
            }
        };
        Waiting sampled = startWaiting(2);
        assertEquals(Waiters.DURABLE, end(sampled));
        assertEquals(2, calls.get(), "it returned at the yield that saw it woken");
        assertTrue(waiters.yielding(), "one paying sample outweighs one that did not");
        assertArrayEquals(new long[] {0, 1, 1}, waiters.counts());
    }

    @Test
    @Timeout(60)
    void aWaitThatOutlastsTheYieldWindowParksWithoutAVerdict() throws Exception {
        driven.perYield = 1_000; // fast yields, below the slow mark
        Waiting w = startWaiting(1);
        WaitersTest.untilParked(w.thread);
        long expected = Waiters.MAX_YIELD_NANOS / 1_000 + 1;
        assertEquals(expected, driven.yields.get(), "it yielded for the whole window, then parked");
        assertTrue(waiters.yielding(), "an unsampled wait that ran out changes nothing");
        wakeUpTo(1);
        assertEquals(Waiters.DURABLE, end(w));
        assertArrayEquals(new long[] {0, 0, 1}, waiters.counts());
    }
}
