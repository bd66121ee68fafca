package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.htod.fragment.Change;
import org.htod.fragment.PublishResult;

/**
 * Stands between the publisher and the cache's apply: the first unit waits there until {@link
 * #open}, so that the publishes submitted meanwhile queue behind it and are taken as one unit.
 * Records the size of every unit it is given.
 */
final class Gate implements Function<List<Change>, PublishResult> {
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch open = new CountDownLatch(1);
    final List<Integer> units = new CopyOnWriteArrayList<>();
    private volatile Function<List<Change>, PublishResult> next;

    /** This gate in front of {@code apply}. */
    Gate around(Function<List<Change>, PublishResult> apply) {
        this.next = apply;
        return this;
    }

    @Override
    public PublishResult apply(List<Change> unit) {
        units.add(unit.size());
        entered.countDown();
        try {
            if (!open.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the gate was never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return next.apply(unit);
    }

    /** Waits until the writer holds the first unit here. */
    void awaitEntered() throws InterruptedException {
        assertTrue(entered.await(30, TimeUnit.SECONDS), "the writer never took a unit");
    }

    /** Waits until {@code n} publishes are queued behind the unit held here. */
    static void awaitWaiting(Publisher p, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (p.waiting() < n) {
            assertTrue(System.nanoTime() < deadline, p.waiting() + " publishes queued, expected " + n);
            Thread.sleep(10);
        }
    }

    void open() {
        open.countDown();
    }
}
