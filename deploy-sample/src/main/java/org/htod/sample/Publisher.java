package org.htod.sample;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.htod.EntryTooLargeException;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;
import org.htod.fragment.MalformedIncludeException;
import org.htod.fragment.PublishResult;
import org.htod.odg.CycleException;

/**
 * The one writer of the server's fragment cache. Requests queue here; the writer thread takes
 * every change waiting (up to {@link #MAX_UNIT}) and applies them as one unit, so that concurrent
 * publishes share one sync, as a group commit does. A future completes only once its unit is
 * durable, and only then does the server answer. If the unit is refused because one change is
 * (an include cycle, a malformed include), or because together they change more than one atomic
 * unit of the store holds (one log record), the changes are applied again one by one, so that
 * each is answered for itself.
 */
final class Publisher implements AutoCloseable {
    static final int MAX_UNIT = 64;

    private record Pending(Change change, CompletableFuture<PublishResult> done) {}

    private final FragmentCache cache;
    private final ServerMetrics metrics;
    private final BlockingQueue<Pending> queue = new LinkedBlockingQueue<>(10_000);
    private final Thread writer;
    private volatile boolean closing;

    Publisher(FragmentCache cache, ServerMetrics metrics) {
        this.cache = cache;
        this.metrics = metrics;
        this.writer = new Thread(this::run, "htod-publisher");
        writer.start();
    }

    /** Queues {@code c}; the future completes when it is durable, or with the reason it was refused. */
    CompletableFuture<PublishResult> submit(Change c) {
        CompletableFuture<PublishResult> f = new CompletableFuture<>();
        if (closing) {
            f.completeExceptionally(new IllegalStateException("the server is shutting down"));
        } else if (!queue.offer(new Pending(c, f))) {
            f.completeExceptionally(new IllegalStateException("too many publishes waiting; try again"));
        }
        return f;
    }

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
            } finally {
                unit.clear();
            }
        }
        // A request that slipped in after the last unit: answered, never left waiting.
        for (Pending p; (p = queue.poll()) != null;) {
            p.done().completeExceptionally(new IllegalStateException("the server is shutting down"));
        }
    }

    private void apply(List<Pending> unit) {
        List<Change> changes = new ArrayList<>(unit.size());
        for (Pending p : unit) {
            changes.add(p.change());
        }
        try {
            PublishResult r = cache.apply(changes);
            count(r, unit.size());
            for (Pending p : unit) {
                p.done().complete(r);
            }
        } catch (CycleException | MalformedIncludeException | EntryTooLargeException e) {
            if (unit.size() == 1) {
                unit.get(0).done().completeExceptionally(e);
                return;
            }
            for (Pending p : unit) {
                apply(List.of(p));
            }
        } catch (RuntimeException e) {
            for (Pending p : unit) {
                p.done().completeExceptionally(e);
            }
        }
    }

    private void count(PublishResult r, int changes) {
        metrics.units.increment();
        metrics.publishes.increment(changes);
        metrics.rebuilds.increment(r.rebuilt().size());
        metrics.reconstructions.increment(r.reconstructed());
    }

    /** Applies what is queued, then stops the writer. */
    @Override
    public void close() {
        closing = true;
        try {
            writer.join(TimeUnit.MINUTES.toMillis(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
