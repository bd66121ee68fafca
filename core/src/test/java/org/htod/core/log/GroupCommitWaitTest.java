package org.htod.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.Seeds;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How writers wait for a group commit ({@link Waiters}): parked, each woken by the commit that
 * covers its record, one of the rest woken to lead the next group. A lost wake-up shows here as a
 * writer that never returns (each test has a time limit); a wrong one as a writer that returns
 * before its record is durable.
 */
class GroupCommitWaitTest {
    private static final long REGION = 8192;
    private static final int DATA = 1;

    /** A device whose durable writes and syncs take {@code micros}, as a disk's do; a write may be told to fail. */
    private static final class SlowDevice extends ForwardingDevice {
        final long micros;
        final AtomicInteger failNext = new AtomicInteger();

        SlowDevice(BlockDevice inner, long micros) {
            super(inner);
            this.micros = micros;
        }

        @Override
        public void writeDurable(long pos, ByteBuffer src) {
            pause();
            if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new HtodIOException("durable write at " + pos, new IOException("injected"));
            }
            inner.writeDurable(pos, src);
        }

        @Override
        public void sync() {
            pause();
            super.sync();
        }

        private void pause() {
            long until = System.nanoTime() + micros * 1000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        }
    }

    private static Log log(BlockDevice dev) {
        Log log = new Log(dev, REGION, 4 << 20, 0, 0, 1);
        log.prepare();
        return log;
    }

    private static ByteBuffer payload(long id) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.putLong(0, id);
        return b;
    }

    /** Frees what is durable, so that writers never wait for room. */
    private static Thread releaser(Log log, AtomicBoolean running) {
        Thread t = new Thread(() -> {
            while (running.get()) {
                log.release(log.durable());
                Thread.onSpinWait();
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Writer threads {@code 0 .. n-1} running {@code body}, started; what a body throws is added to {@code errors}. */
    private static List<Thread> writers(int n, ConcurrentLinkedQueue<Throwable> errors, Body body) {
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    body.run(id);
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            th.start();
            ts.add(th);
        }
        return ts;
    }

    private interface Body {
        void run(int id) throws Exception;
    }

    private static void joinAll(List<Thread> ts) throws InterruptedException {
        for (Thread th : ts) {
            th.join();
        }
    }

    @Test
    @Timeout(60)
    void writersBehindASlowCommitAllReturnDurableAndShareTheNext() throws Exception {
        Log log = log(new SlowDevice(new MemoryDevice(), 2_000));
        int threads = 32;
        int each = 40;
        AtomicBoolean running = new AtomicBoolean(true);
        Thread releaser = releaser(log, running);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = writers(threads, errors, id -> {
            go.await();
            for (int i = 0; i < each; i++) {
                Log.Appended a = log.append(DATA, payload(id * 1000L + i));
                log.awaitDurable(a);
                long durable = log.durable();
                if (durable < a.end()) {
                    throw new AssertionError("returned with its record at " + a.end() + " not durable (" + durable + ")");
                }
            }
        });
        go.countDown();
        joinAll(ts);
        running.set(false);
        releaser.join();
        assertTrue(errors.isEmpty(), errors.size() + " errors, the first: " + errors.peek());
        long[] groups = log.groupCounts();
        assertEquals((long) threads * each, groups[1], "every record went out in some group");
        // A commit takes 2 ms, far longer than a writer needs to come back with its next record:
        // nearly every writer is in each group. One record a group would mean waiters were woken
        // one commit too late, or led one at a time.
        assertTrue(groups[1] >= 4 * groups[0], groups[1] + " records in " + groups[0] + " groups");
    }

    /** A device whose first durable write waits until the test lets it go. */
    private static final class HeldDevice extends ForwardingDevice {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch letGo = new CountDownLatch(1);
        private final AtomicBoolean first = new AtomicBoolean(true);

        HeldDevice(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void writeDurable(long pos, ByteBuffer src) {
            if (first.getAndSet(false)) {
                entered.countDown();
                try {
                    letGo.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
            inner.writeDurable(pos, src);
        }
    }

    /** Starts a writer that leads a commit of one record, and returns once that commit is held in its write. */
    private static Thread leadHeld(Log log, HeldDevice dev) throws InterruptedException {
        Thread first = new Thread(() -> log.awaitDurable(log.append(DATA, payload(1))));
        first.setDaemon(true);
        first.start();
        dev.entered.await();
        return first;
    }

    /** Starts {@code t}, a second writer, and returns once it parks behind the held commit. */
    private static void startParked(Thread t, Log log) throws InterruptedException {
        t.setDaemon(true); // a lost wake-up leaves it parked: it must not keep the test JVM alive
        t.start();
        while (LockSupport.getBlocker(t) != log) {
            assertTrue(t.isAlive(), "the second writer parks behind the first's commit");
            Thread.sleep(1);
        }
    }

    /**
     * A writer interrupted while it waits for the commit of its record waits on, and returns once
     * the record is durable, its interrupt set again. Thrown out of the wait, as before, it was
     * told its write had failed while the record was appended, and durable with the next commit.
     */
    @Test
    @Timeout(60)
    void anInterruptedWaiterWaitsOnAndKeepsItsInterrupt() throws Exception {
        HeldDevice dev = new HeldDevice(new MemoryDevice());
        Log log = log(dev);
        Thread first = leadHeld(log, dev);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean interruptKept = new AtomicBoolean();
        Log.Appended[] second = new Log.Appended[1];
        Thread waiter = new Thread(() -> {
            second[0] = log.append(DATA, payload(2));
            try {
                log.awaitDurable(second[0]);
                interruptKept.set(Thread.currentThread().isInterrupted());
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        startParked(waiter, log);
        waiter.interrupt();
        // Taken by the waiter (its flag cleared) and parked on the log again, or gone with an error.
        while (waiter.isAlive() && (waiter.isInterrupted()
                || LockSupport.getBlocker(waiter) != log)) {
            Thread.sleep(1);
        }
        assertTrue(waiter.isAlive(), "the interrupt ended the wait: " + thrown.get());
        dev.letGo.countDown();
        waiter.join(20_000);
        first.join(20_000);
        assertEquals(null, thrown.get(), "the interrupted writer's wait");
        assertTrue(interruptKept.get(), "its interrupt, set again when the wait returned");
        assertTrue(log.durable() >= second[0].end(), "its record durable when it returned");
    }

    @Test
    @Timeout(60)
    void aWriterParkedDuringACommitItMissedLeadsTheNext() throws Exception {
        HeldDevice dev = new HeldDevice(new MemoryDevice());
        Log log = log(dev);
        Thread first = leadHeld(log, dev);
        AtomicBoolean secondDone = new AtomicBoolean();
        Log.Appended[] second = new Log.Appended[1];
        Thread late = new Thread(() -> {
            second[0] = log.append(DATA, payload(2));
            log.awaitDurable(second[0]);
            secondDone.set(true);
        });
        startParked(late, log);
        dev.letGo.countDown();
        first.join();
        // Nobody else comes: unless the first commit's end wakes it to lead, it waits for ever.
        late.join(20_000);
        assertTrue(secondDone.get(), "the writer that missed the commit led the next");
        assertTrue(log.durable() >= second[0].end());
    }

    @Test
    @Timeout(120)
    void interruptedWaitersWaitOnAndKeepTheirInterrupts() throws Exception {
        Seeds.run("GroupCommitWaitTest", GroupCommitWaitTest::interrupted);
    }

    private static void interrupted(long seed) throws Exception {
        Log log = log(new SlowDevice(new MemoryDevice(), 200));
        int threads = 12;
        int each = 300;
        AtomicBoolean running = new AtomicBoolean(true);
        Thread releaser = releaser(log, running);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicLong interruptsKept = new AtomicLong();
        List<Thread> ts = writers(threads, errors, id -> {
            for (int i = 0; i < each; i++) {
                Log.Appended a = log.append(DATA, payload(id * 1000L + i));
                try {
                    log.awaitDurable(a); // an interrupt does not end it: the record is appended
                    if (log.durable() < a.end()) {
                        errors.add(new AssertionError("record at " + a.end() + " acknowledged before it was durable"));
                    }
                } catch (HtodException e) {
                    errors.add(e);
                }
                if (Thread.interrupted()) { // during the wait or after it: either way set when it returns
                    interruptsKept.incrementAndGet();
                }
            }
        });
        SplittableRandom r = new SplittableRandom(seed);
        while (ts.stream().anyMatch(Thread::isAlive)) {
            ts.get(r.nextInt(threads)).interrupt();
            TimeUnit.MICROSECONDS.sleep(100 + r.nextInt(400));
        }
        joinAll(ts);
        // Whatever the interrupts left unsynced, one more commit covers it: the log still works.
        log.sync();
        running.set(false);
        releaser.join();
        assertTrue(errors.isEmpty(), errors.size() + " errors, the first: " + errors.peek());
        assertEquals(log.end(), log.durable(), "a last sync makes everything durable");
        assertTrue(interruptsKept.get() > 0, "the writers were interrupted, and kept the interrupts");
    }

    @Test
    @Timeout(60)
    void aFailedCommitTellsEveryParkedWriterAndHealingLetsThemGoOn() throws Exception {
        SlowDevice dev = new SlowDevice(new MemoryDevice(), 20_000);
        Log log = log(dev);
        log.awaitDurable(log.append(DATA, payload(0)));
        dev.failNext.set(1);
        int threads = 16;
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> other = new ConcurrentLinkedQueue<>();
        AtomicInteger acknowledged = new AtomicInteger();
        joinAll(writers(threads, other, id -> {
            try {
                log.awaitDurable(log.append(DATA, payload(1000 + id)));
                acknowledged.incrementAndGet();
            } catch (HtodException e) {
                failures.add(e);
            }
        }));
        assertTrue(other.isEmpty(), other.toString());
        // The first commit (20 ms) fails; writers that appended during it wait behind it, and its
        // failure drops their records too: each is told, none waits on.
        assertEquals(threads, failures.size() + acknowledged.get(), "every writer returned");
        assertTrue(failures.size() >= 1, "the failed commit's writers were told");
        assertTrue(log.failed());
        log.heal();
        log.awaitDurable(log.append(DATA, payload(99)));
        assertEquals(log.end(), log.durable());
    }
}
