package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;
import org.htod.fragment.PublishResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The publisher over a real cache, with its first unit held at a {@link Gate} so that the next ones group. */
class PublisherTest {
    @TempDir
    Path dir;
    private HtodStore store;
    private FragmentCache cache;
    private Publisher publisher;

    @BeforeEach
    void open() {
        store = Htod.builder(dir.resolve("site.htod")).durability(Durability.NONE).open();
        cache = FragmentCache.open(store, "site");
    }

    @AfterEach
    void close() {
        if (publisher != null) {
            publisher.close();
        }
        store.close();
    }

    /**
     * A unit of three publishes, one of which the cache refuses with an exception the publisher
     * has no special case for (here an IllegalStateException the test's cache throws for that
     * path), is applied again one change at a time: the two good publishes are applied and
     * answered, the bad one alone fails. The publisher used to fall back only for
     * an include cycle, a malformed include or a unit too large; on any other exception every
     * publish of the unit failed with the bad one's exception, answered 500.
     */
    @Test
    void oneBadChangeFailsAloneAndTheOthersOfItsUnitAreApplied() throws Exception {
        Gate gate = new Gate();
        publisher = new Publisher(gate.around(unit -> {
            if (unit.stream().anyMatch(c -> c.path().equals("/bad.html"))) {
                throw new IllegalStateException("the test's cache refuses /bad.html");
            }
            return cache.apply(unit);
        }), new ServerMetrics());
        CompletableFuture<PublishResult> first = publisher.submit(Change.publish("/first.html", "1"));
        gate.awaitEntered();
        CompletableFuture<PublishResult> good1 = publisher.submit(Change.publish("/good-1.html", "g1"));
        CompletableFuture<PublishResult> bad = publisher.submit(Change.publish("/bad.html", "b"));
        CompletableFuture<PublishResult> good2 = publisher.submit(Change.publish("/good-2.html", "g2"));
        Gate.awaitWaiting(publisher, 3);
        gate.open();
        assertEquals(List.of("/first.html"), first.get(30, TimeUnit.SECONDS).changed());
        assertEquals(List.of("/good-1.html"), good1.get(30, TimeUnit.SECONDS).changed());
        assertEquals(List.of("/good-2.html"), good2.get(30, TimeUnit.SECONDS).changed());
        ExecutionException e = assertThrows(ExecutionException.class, () -> bad.get(30, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(List.of(1, 3, 1, 1, 1), gate.units, "the three as one unit, then each alone");
        assertEquals("g1", cache.source("/good-1.html"));
        assertEquals("g2", cache.source("/good-2.html"));
        assertNull(cache.source("/bad.html"));
    }

    /**
     * An Error thrown while a unit is applied (here an OutOfMemoryError) fails that unit's
     * publishes with it; the writer then stops for good: the publishes queued behind it, and
     * every later submit at once, fail with an IllegalStateException (a 503) that names the Error,
     * and nothing more is given to the cache. The writer thread used to die with the Error,
     * leaving its unit's futures and every later one uncompleted: their HTTP requests hung.
     */
    @Test
    void anErrorWhileApplyingFailsItsUnitAndEveryLaterPublishAtOnce() throws Exception {
        Gate gate = new Gate();
        publisher = new Publisher(gate.around(unit -> {
            throw new OutOfMemoryError("no room for the unit");
        }), new ServerMetrics());
        CompletableFuture<PublishResult> first = publisher.submit(Change.publish("/first.html", "1"));
        gate.awaitEntered();
        CompletableFuture<PublishResult> queued = publisher.submit(Change.publish("/queued.html", "q"));
        Gate.awaitWaiting(publisher, 1);
        gate.open();
        ExecutionException e = assertThrows(ExecutionException.class, () -> first.get(30, TimeUnit.SECONDS));
        assertInstanceOf(OutOfMemoryError.class, e.getCause());
        e = assertThrows(ExecutionException.class, () -> queued.get(30, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("OutOfMemoryError: no room for the unit"), e.getCause().getMessage());
        CompletableFuture<PublishResult> later = publisher.submit(Change.publish("/later.html", "l"));
        assertTrue(later.isCompletedExceptionally(), "a submit after the Error fails at once");
        e = assertThrows(ExecutionException.class, later::get);
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(List.of(1), gate.units, "nothing applied after the Error");
        assertNull(cache.source("/queued.html"));
    }

    /**
     * Publishes queued behind a held unit are bounded by their bytes, not only their number: past
     * the budget a publish is refused at once (a 503), and once the queue is answered its bytes
     * are free again. By count alone, 10,000 publishes of a megabyte each could wait in memory.
     */
    @Test
    void publishesWaitingAreBoundedByTheirBytes() throws Exception {
        Gate gate = new Gate();
        publisher = new Publisher(gate.around(cache::apply), new ServerMetrics());
        CompletableFuture<PublishResult> first = publisher.submit(Change.publish("/first.html", "1"));
        gate.awaitEntered();
        String mb = "x".repeat(1 << 19); // a megabyte of chars
        List<CompletableFuture<PublishResult>> queued = new java.util.ArrayList<>();
        CompletableFuture<PublishResult> refused = null;
        for (int i = 0; i < 1_000 && refused == null; i++) {
            CompletableFuture<PublishResult> f = publisher.submit(Change.publish("/big-" + i + ".html", mb));
            if (f.isCompletedExceptionally()) {
                refused = f;
            } else {
                queued.add(f);
            }
        }
        assertNotNull(refused, "a publish past the budget is refused at once");
        ExecutionException e = assertThrows(ExecutionException.class, refused::get);
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(publisher.waitingBytes() <= Publisher.MAX_WAITING_BYTES, "held: " + publisher.waitingBytes());
        gate.open();
        first.get(30, TimeUnit.SECONDS);
        for (CompletableFuture<PublishResult> f : queued) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertEquals(0, publisher.waitingBytes(), "all answered: nothing held");
    }
}
