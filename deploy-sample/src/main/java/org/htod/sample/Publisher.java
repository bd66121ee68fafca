package org.htod.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;
import org.htod.fragment.PublishResult;

/**
 * The one writer of the server's fragment cache. Requests queue here; the writer thread takes
 * every change waiting (up to {@link #MAX_UNIT}) and applies them as one unit, so that concurrent
 * publishes share one sync, as a group commit does. A future completes only once its unit is
 * durable, and only then does the server answer. If the unit is refused (one change is: an include
 * cycle, a malformed include; or together they change more than one atomic unit of the store
 * holds, one log record; or any other failure), the changes are applied again one
 * by one, so that each is answered for itself.
 *
 * <p>An {@link Error} while applying (out of memory, a stack overflow, a failed assertion) stops
 * the writer for good: see {@link #run}.
 */
final class Publisher implements AutoCloseable {
    static final int MAX_UNIT = 64;
    /** How long {@link #close} waits for the writer to apply what is queued. */
    static final Duration DRAIN = Duration.ofMinutes(1);

    private record Pending(Change change, CompletableFuture<PublishResult> done) {}

    private final Function<List<Change>, PublishResult> writes;
    private final ServerMetrics metrics;
    private final BlockingQueue<Pending> queue = new LinkedBlockingQueue<>(10_000);
    private final Thread writer;
    private volatile boolean closing;
    /** The Error that stopped the writer, or null. */
    private volatile Throwable failed;

    Publisher(FragmentCache cache, ServerMetrics metrics) {
        this(cache::apply, metrics);
    }

    /** @param writes applies one unit: the cache's apply, or in a test one that waits or fails first */
    Publisher(Function<List<Change>, PublishResult> writes, ServerMetrics metrics) {
        this.writes = writes;
        this.metrics = metrics;
        this.writer = new Thread(this::run, "htod-publisher");
        writer.start();
    }

    /** Queues {@code c}; the future completes when it is durable, or with the reason it was refused. */
    CompletableFuture<PublishResult> submit(Change c) {
        CompletableFuture<PublishResult> f = new CompletableFuture<>();
        Pending p = new Pending(c, f);
        IllegalStateException refused = refusal();
        long bytes = bytesOf(c);
        if (refused != null) {
            f.completeExceptionally(refused);
            return f;
        }
        if (!reserve(bytes)) {
            f.completeExceptionally(new IllegalStateException("too many bytes of publishes waiting (" + MAX_WAITING_BYTES
                    + " at most); try again"));
            return f;
        }
        f.whenComplete((r, e) -> waitingBytes.addAndGet(-bytes)); // answered: no longer held here
        if (!queue.offer(p)) {
            f.completeExceptionally(new IllegalStateException("too many publishes waiting; try again"));
        } else if (refusal() != null && queue.remove(p)) {
            // The writer stopped between the look above and the offer, and may have drained the
            // queue for the last time: taken back, the publish is answered here, never left waiting.
            // If the writer took it first, it applies or refuses it.
            f.completeExceptionally(refusal());
        }
        return f;
    }

    /**
     * The bytes of sources the queue may hold: its count alone let a flood of large publishes
     * (a megabyte each, as the server accepts) hold some 10 GB while the writer synced.
     */
    static final long MAX_WAITING_BYTES = 64L << 20;

    /** Source bytes queued and not answered yet. */
    private final java.util.concurrent.atomic.AtomicLong waitingBytes = new java.util.concurrent.atomic.AtomicLong();

    /** A change's weight in the budget: its source's chars, two bytes each, and a little for the rest. */
    private static long bytesOf(Change c) {
        return 64 + 2L * c.path().length() + (c.source() == null ? 0 : 2L * c.source().length());
    }

    /** Takes {@code bytes} of the budget if there is room: one publish larger than all of it still goes alone. */
    private boolean reserve(long bytes) {
        while (true) {
            long now = waitingBytes.get();
            if (now > 0 && now + bytes > MAX_WAITING_BYTES) {
                return false;
            }
            if (waitingBytes.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    /** Source bytes queued and not answered yet: for tests. */
    long waitingBytes() {
        return waitingBytes.get();
    }

    /** Why a publish is refused now, or null while the writer takes them. */
    private IllegalStateException refusal() {
        Throwable e = failed;
        if (e != null) {
            return new IllegalStateException("publishing has stopped: the writer failed with " + e
                    + "; pages are still served, a restart of the server publishes again", e);
        }
        return closing ? new IllegalStateException("the server is shutting down") : null;
    }

    /** How many publishes wait for the writer. */
    int waiting() {
        return queue.size();
    }

    /**
     * The writer. An Error thrown while applying a unit may have struck anywhere in it: half way
     * through the cache's in-memory graph or the store's own state, and on a heap the JVM may no
     * longer trust. Going on could write pages that disagree with their fragments, so the writer
     * does not survive it: that unit's publishes fail with the Error (500), those queued and every
     * later one fail at once with a message naming it (503), and a line is logged. Pages are still
     * served from what is durable; a restart recovers the store and publishes again. Silently
     * dying, as a thread does by default, would leave every future queued here and every request
     * waiting on one unanswered for ever.
     */
    private void run() {
        List<Pending> unit = new ArrayList<>();
        while (!closing || !queue.isEmpty()) {
            try {
                Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                unit.add(first);
                queue.drainTo(unit, MAX_UNIT - 1);
                apply(unit);
            } catch (InterruptedException e) {
                closing = true;
            } catch (Throwable e) {
                failed = e; // first: a submit that looks from now on is refused
                System.err.println("htod-sample: the publisher stopped, publishes are refused until a restart: " + e);
                for (Pending p : unit) {
                    p.done().completeExceptionally(e); // those of the unit answered already stay so
                }
                break;
            } finally {
                unit.clear();
            }
        }
        // What is left (closing, or stopped by an Error) is answered, never left waiting.
        for (Pending p; (p = queue.poll()) != null;) {
            p.done().completeExceptionally(refusal());
        }
    }

    private void apply(List<Pending> unit) {
        List<Change> changes = new ArrayList<>(unit.size());
        for (Pending p : unit) {
            changes.add(p.change());
        }
        PublishResult r;
        try {
            r = writes.apply(changes);
        } catch (RuntimeException e) {
            if (unit.size() == 1) {
                unit.get(0).done().completeExceptionally(e);
                return;
            }
            // One change can spoil the unit for all (an include cycle, a malformed include), or
            // the unit as a whole may be too large for one log
            // record: whatever the exception, each change is applied again alone, so that only
            // the one at fault fails. Safe even if the store failed after writing the unit: a
            // change applied twice writes the same thing, and in the same order the outcome is
            // the same.
            for (Pending p : unit) {
                apply(List.of(p));
            }
            return;
        }
        count(r, unit.size());
        for (Pending p : unit) {
            p.done().complete(r);
        }
    }

    private void count(PublishResult r, int changes) {
        metrics.units.increment();
        metrics.publishes.increment(changes);
        metrics.rebuilds.increment(r.rebuilt().size());
        metrics.reconstructions.increment(r.reconstructed());
    }

    /**
     * Applies and answers what is queued, then stops the writer. Waits up to {@link #DRAIN},
     * through interrupts (kept for the caller): the store must not be closed under a unit being
     * applied.
     *
     * @throws IllegalStateException if the writer is still applying a unit after that: the caller
     *     must then leave the store open
     */
    @Override
    public void close() {
        closing = true;
        long deadline = System.nanoTime() + DRAIN.toNanos();
        boolean interrupted = false;
        for (long left; writer.isAlive() && (left = deadline - System.nanoTime()) > 0;) {
            try {
                writer.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (writer.isAlive()) {
            throw new IllegalStateException("the publisher's writer is still applying a unit after " + DRAIN.toSeconds()
                    + " s: the store must not be closed under it");
        }
    }
}
