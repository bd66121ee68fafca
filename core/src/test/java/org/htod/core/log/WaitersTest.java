package org.htod.core.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Waiters#await}'s ways of waiting (none, yield, park): each ends in the state the
 * waker set, a long wait ends parked rather than yielding on, and an interrupt ends any of them.
 * The monitor the log holds around {@link Waiters#add} and {@link Waiters#wake} is this test's
 * own here.
 */
class WaitersTest {
    private final Waiters waiters = new Waiters();

    @Test
    @Timeout(30)
    void aWaiterMarkedBeforeItWaitsReturnsItsStateAtOnce() {
        Waiters.Waiter w;
        synchronized (waiters) {
            w = waiters.add(10, 0);
            Waiters.unpark(waiters.wake(10, 0, false, false));
        }
        assertEquals(Waiters.DURABLE, waiters.await(w, this));
        assertArrayEquals(new long[] {1, 0, 0}, waiters.counts(), "over before it began");
    }

    /**
     * Waits until {@code t} has parked, and fails if it has not within 20 s: a waiter still
     * yielding is RUNNABLE, never WAITING.
     */
    static void untilParked(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (t.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertEquals(Thread.State.WAITING, t.getState(), "the waiter parks once yielding has not ended its wait");
    }

    @Test
    @Timeout(30)
    void aLongWaitEndsParkedAndTheWakeReachesIt() throws Exception {
        AtomicReference<Waiters.Waiter> added = new AtomicReference<>();
        CompletableFuture<Integer> state = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            Waiters.Waiter w;
            synchronized (waiters) {
                w = waiters.add(100, 0);
            }
            added.set(w);
            state.complete(waiters.await(w, this));
        });
        t.start();
        untilParked(t); // far beyond the yield window
        assertEquals(Waiters.WAITING, added.get().state);
        synchronized (waiters) {
            // durable short of its record: it stays; then one that covers it
            Waiters.unpark(waiters.wake(99, 0, false, false));
        }
        Thread.sleep(50);
        assertTrue(!state.isDone(), "a commit short of the record left the waiter waiting");
        synchronized (waiters) {
            Waiters.unpark(waiters.wake(100, 0, false, false));
        }
        assertEquals(Waiters.DURABLE, state.get(20, TimeUnit.SECONDS));
        t.join();
        assertTrue(waiters.isEmpty());
        assertArrayEquals(new long[] {0, 0, 1}, waiters.counts(), "ended parked");
    }

    @Test
    @Timeout(60)
    void aWakeWhileWaitersYieldOrParkEndsEachWaitInTheStateItWasGiven() throws Exception {
        int n = 8;
        for (int round = 0; round < 200; round++) {
            Thread[] ts = new Thread[n];
            int[] states = new int[n];
            AtomicReferenceArray<Waiters.Waiter> added = new AtomicReferenceArray<>(n);
            for (int i = 0; i < n; i++) {
                int id = i;
                ts[i] = new Thread(() -> {
                    Waiters.Waiter w;
                    synchronized (waiters) {
                        w = waiters.add(id, 0);
                    }
                    added.set(id, w);
                    states[id] = waiters.await(w, this);
                });
                ts[i].start();
            }
            for (int i = 0; i < n; i++) {
                while (added.get(i) == null) {
                    Thread.onSpinWait();
                }
            }
            // At once: some may still be yielding, others have parked.
            synchronized (waiters) {
                // durable up to 3: waiters 0 to 3 are covered, and one of the rest is the heir
                Waiters.unpark(waiters.wake(3, 0, true, false));
                // then every one left is told to look again, as after a failure
                Waiters.unpark(waiters.wake(3, 0, false, true));
            }
            for (Thread t : ts) {
                t.join();
            }
            for (int i = 0; i < n; i++) {
                int expected = i <= 3 ? Waiters.DURABLE : Waiters.AGAIN;
                assertEquals(expected, states[i], "round " + round + ", waiter " + i);
            }
            synchronized (waiters) {
                for (int i = 0; i < n; i++) {
                    waiters.back(added.get(i)); // the heir, whichever it was, is back
                }
            }
            assertTrue(waiters.isEmpty());
        }
        long[] counts = waiters.counts();
        assertEquals(200L * n, counts[0] + counts[1] + counts[2], "each wait counted once: " + Arrays.toString(counts));
    }

    @Test
    @Timeout(30)
    void anInterruptEndsTheWaitWithTheWaiterStillWaiting() throws Exception {
        CompletableFuture<Integer> state = new CompletableFuture<>();
        CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
        Waiters.Waiter w;
        synchronized (waiters) {
            w = waiters.add(5, 0);
        }
        Thread t = new Thread(() -> {
            state.complete(waiters.await(w, this));
            stillInterrupted.complete(Thread.currentThread().isInterrupted());
        });
        t.start();
        t.interrupt();
        assertEquals(Waiters.WAITING, state.get(20, TimeUnit.SECONDS));
        assertTrue(stillInterrupted.get(20, TimeUnit.SECONDS), "the interrupt status stays set");
        synchronized (waiters) {
            waiters.wake(5, 0, false, false); // still listed: the commit that covers it takes it out
        }
        assertTrue(waiters.isEmpty());
    }
}
