package org.htod.core.device;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs threads to their end while another interrupts one of them, picked at random, every so
 * many microseconds: what a cancelled task or an executor shut down does to a store's users.
 */
public final class Interrupter {
    private Interrupter() {}

    /**
     * Starts {@code threads}, interrupts them at random (seeded by {@code seed}) every {@code
     * minMicros} to {@code maxMicros} until each has ended, and returns how many interrupts it sent.
     */
    public static long runInterrupting(List<Thread> threads, long seed, int minMicros, int maxMicros)
            throws InterruptedException {
        AtomicLong sent = new AtomicLong();
        Thread interrupter = new Thread(() -> {
            SplittableRandom r = new SplittableRandom(seed);
            while (threads.stream().anyMatch(Thread::isAlive)) {
                threads.get(r.nextInt(threads.size())).interrupt();
                sent.incrementAndGet();
                LockSupport.parkNanos(1000L * (minMicros + r.nextInt(maxMicros - minMicros + 1)));
            }
        }, "interrupter");
        threads.forEach(Thread::start);
        interrupter.start();
        for (Thread t : threads) {
            t.join();
        }
        interrupter.join();
        return sent.get();
    }
}
