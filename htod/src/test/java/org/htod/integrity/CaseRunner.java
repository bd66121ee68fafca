package org.htod.integrity;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs numbered cases on a few threads, each case bounded in time: a case that does not end in
 * time is a hang. Its thread is told to stop and, where the JVM still allows it, stopped, so that
 * a store looping forever on a damaged chain does not eat the machine for the rest of the run.
 */
final class CaseRunner {
    /** One case: runs case {@code index}, writing what it finds into {@code v}. */
    @FunctionalInterface
    interface Case {
        void run(int index, Verdict v);
    }

    /** Where each case's verdict goes, with its index. */
    @FunctionalInterface
    interface Sink {
        void accept(int index, Verdict v);
    }

    private final int threads;
    private final long timeoutMillis;
    private final int maxHangs;
    private final AtomicInteger hangs = new AtomicInteger();

    CaseRunner(int threads, long timeoutMillis, int maxHangs) {
        this.threads = threads;
        this.timeoutMillis = timeoutMillis;
        this.maxHangs = maxHangs;
    }

    /** Runs cases {@code 0 .. count-1}; stops early after {@code maxHangs} hangs. */
    void run(int count, Case c, Sink sink) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        ExecutorService drivers = Executors.newFixedThreadPool(threads);
        for (int t = 0; t < threads; t++) {
            drivers.execute(() -> drive(next, count, c, sink));
        }
        drivers.shutdown();
        while (!drivers.awaitTermination(1, TimeUnit.MINUTES)) {
            // the cases bound themselves; keep waiting
        }
    }

    int hangs() {
        return hangs.get();
    }

    private void drive(AtomicInteger next, int count, Case c, Sink sink) {
        AtomicReference<Thread> worker = new AtomicReference<>();
        ExecutorService exec = single(worker);
        try {
            for (int i = next.getAndIncrement(); i < count && hangs.get() < maxHangs; i = next.getAndIncrement()) {
                int index = i;
                Verdict v = new Verdict();
                Future<?> f = exec.submit(() -> c.run(index, v));
                try {
                    f.get(timeoutMillis, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    v.hang = true;
                    v.abandoned = true;
                    hangs.incrementAndGet();
                    f.cancel(true);
                    stop(worker.get());
                    exec.shutdownNow();
                    exec = single(worker);
                } catch (ExecutionException e) {
                    v.other("the case itself", e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                sink.accept(index, v);
            }
        } finally {
            exec.shutdownNow();
        }
    }

    private static ExecutorService single(AtomicReference<Thread> worker) {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "fuzz case");
            t.setDaemon(true);
            worker.set(t);
            return t;
        });
    }

    /**
     * Stops a thread caught in an endless loop. {@code Thread.stop} is deprecated and gone from
     * newer JVMs; where it is, the thread is left to spin as a daemon, and the run ends after a
     * few hangs anyway.
     */
    private static void stop(Thread t) {
        if (t == null) {
            return;
        }
        try {
            Thread.class.getMethod("stop").invoke(t);
        } catch (ReflectiveOperationException | RuntimeException e) {
            // not available on this JVM
        }
    }
}
