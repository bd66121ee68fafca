package org.htod.fragment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.htod.Durability;
import org.htod.EntryTooLargeException;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.device.MemoryDevice;
import org.htod.odg.CycleException;
import org.junit.jupiter.api.Test;

/** The include syntax, publishing, refusals that write nothing, and expiry, on small known sites. */
class FragmentCacheTest {
    private static HtodStore memory() {
        return Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20).durability(Durability.NONE).open();
    }

    @Test
    void includeSyntax() {
        assertEquals(List.of(new Include("/a.html", 2, 36), new Include("/b/c", 37, 68)),
                FragmentCache.includes("x <!--#include virtual=\"/a.html\" --> <!--#include\n virtual=\"/b/c\"-->"));
        assertEquals(List.of(), FragmentCache.includes("<!-- a comment --> <!--#echo var=\"x\" -->"));
        String[][] bad = {
            {"<!--#include virtual=\"/a\"", "expected -->, found the end of the source"},
            {"<!--#includevirtual=\"/a\" -->", "expected a space after <!--#include"},
            {"<!--#include file=\"/a\" -->", "expected virtual=\"/path\""},
            {"<!--#include virtual=\"/a -->", "the path has no closing quote"},
            {"<!--#include virtual=\"a.html\" -->", "a fragment path starts with '/'"},
            {"<!--#include virtual=\"/a//b\" -->", "no empty, '.' or '..' segment"},
            {"<!--#include virtual=\"/a/../b\" -->", "no empty, '.' or '..' segment"},
            {"<!--#include virtual=\"/a b\" -->", "found ' '"},
        };
        for (String[] b : bad) {
            MalformedIncludeException e = assertThrows(MalformedIncludeException.class, () -> FragmentCache.includes(b[0]),
                    b[0]);
            assertEquals(true, e.getMessage().contains(b[1]), e.getMessage() + " should say " + b[1]);
        }
        assertEquals(22, assertThrows(MalformedIncludeException.class,
                () -> FragmentCache.includes("<!--#include virtual=\"x\" -->")).offset(), "the path's offset");
    }

    @Test
    void publishAssemblesAndRebuildsWhatIncludesAFragment() {
        try (HtodStore store = memory()) {
            FragmentCache c = FragmentCache.open(store, "site");
            c.publish("/results/ski.html", "<td>1. Kostelic</td>");
            c.publish("/sport/ski.html", "<h1>Ski</h1><!--#include virtual=\"/results/ski.html\" -->");
            PublishResult r = c.publish("/index.html",
                    "<!--#include virtual=\"/sport/ski.html\" --><footer><!--#include virtual=\"/later.html\" --></footer>");
            assertEquals(List.of("/index.html"), r.rebuilt());
            assertEquals("<h1>Ski</h1><td>1. Kostelic</td><footer></footer>", c.page("/index.html"));
            r = c.publish("/results/ski.html", "<td>1. Maier</td>");
            assertEquals(List.of("/sport/ski.html", "/index.html"), r.rebuilt());
            assertEquals(2, r.reconstructed());
            assertEquals("<h1>Ski</h1><td>1. Maier</td><footer></footer>", c.page("/index.html"));
            c.publish("/later.html", "(c)");
            assertEquals("<h1>Ski</h1><td>1. Maier</td><footer>(c)</footer>", c.page("/index.html"));
            assertEquals("<td>1. Maier</td>", c.page("/results/ski.html"));
            assertNull(c.page("/nowhere.html"));
            assertEquals(2, c.assembledCount());
        }
    }

    @Test
    void aRefusedPublishWritesNothing() {
        try (HtodStore store = memory()) {
            FragmentCache c = FragmentCache.open(store, "site");
            c.publish("/a", "a <!--#include virtual=\"/b\" -->");
            c.publish("/b", "b");
            long nodes = c.graph().nodeCount();
            CycleException e = assertThrows(CycleException.class, () -> c.apply(List.of(Change.publish("/c", "c"),
                    Change.publish("/b", "b <!--#include virtual=\"/a\" -->"))));
            assertEquals(List.of("/a", "/b", "/a"), e.cycle());
            assertThrows(MalformedIncludeException.class, () -> c.publish("/b", "<!--#include virtual=\"/a\""));
            assertEquals("b", c.source("/b"));
            assertNull(c.source("/c"));
            assertEquals("a b", c.page("/a"));
            assertEquals(nodes, c.graph().nodeCount());
            assertEquals(2, c.fragmentCount());
        }
    }

    @Test
    void aPublishLargerThanOneLogRecordIsRefusedAndWritesNothing() {
        try (HtodStore store = memory()) { // a 1 MiB log region: a record, and so a unit, holds 128 KiB
            FragmentCache c = FragmentCache.open(store, "site");
            c.publish("/a", "a <!--#include virtual=\"/b\" -->");
            c.publish("/b", "b");
            long nodes = c.graph().nodeCount();
            String big = "x".repeat(50_000);
            // 50 KB in cache1, and again in the assembly of each of the two pages that include it
            EntryTooLargeException e = assertThrows(EntryTooLargeException.class, () -> c.apply(List.of(
                    Change.publish("/b", big), Change.publish("/c", "c <!--#include virtual=\"/b\" -->"))));
            assertTrue(e.getMessage().contains("one log record"), e.getMessage());
            assertEquals("b", c.source("/b"));
            assertNull(c.source("/c"));
            assertEquals("a b", c.page("/a"));
            assertEquals(nodes, c.graph().nodeCount());
            // the graph's edit lock was released with the refused unit
            c.publish("/b", "b2");
            assertEquals("a b2", c.page("/a"));
        }
    }

    @Test
    void expiredFragmentsAreSweptAndTheirPagesRebuilt() {
        Clock[] now = {Clock.fixed(Instant.ofEpochSecond(1000), ZoneOffset.UTC)};
        Clock clock = following(now);
        try (HtodStore store = memory()) {
            FragmentCache c = FragmentCache.open(store, "site", clock);
            c.publish("/live.html", "LIVE", Duration.ofMinutes(5));
            c.publish("/page.html", "[<!--#include virtual=\"/live.html\" -->]");
            assertEquals(Instant.ofEpochSecond(1300), c.expiresAt("/live.html"));
            assertEquals(List.of(), c.sweepExpired().changed());
            now[0] = Clock.offset(now[0], Duration.ofMinutes(5));
            PublishResult r = c.sweepExpired();
            assertEquals(List.of("/live.html"), r.changed());
            assertEquals("[]", c.page("/page.html"));
            assertNull(c.source("/live.html"));
            assertEquals(0, c.expiringCount());
        }
    }

    /**
     * A time to live as long as "for ever": the fragment is published and no sweep unpublishes it.
     * {@code Duration.ofSeconds(Long.MAX_VALUE)} used to throw out of {@code toMillis()} (failing
     * the whole unit), and {@code Long.MAX_VALUE / 1000} seconds wrapped the expiry below the clock,
     * so the next sweep unpublished a fragment whose publish had been acknowledged.
     */
    @Test
    void aTimeToLiveTooLongForTheClockNeverExpires() {
        Clock clock = Clock.fixed(Instant.ofEpochSecond(1000), ZoneOffset.UTC);
        try (HtodStore store = memory()) {
            FragmentCache c = FragmentCache.open(store, "site", clock);
            c.publish("/a.html", "A", Duration.ofSeconds(Long.MAX_VALUE / 1000));
            c.publish("/b.html", "B", Duration.ofSeconds(Long.MAX_VALUE));
            assertEquals(List.of(), c.sweepExpired().changed());
            assertEquals("A", c.source("/a.html"));
            assertEquals("B", c.source("/b.html"));
            assertEquals(Instant.ofEpochMilli(Long.MAX_VALUE), c.expiresAt("/a.html"));
        }
    }

    /**
     * More fragments expired than one unit of the store holds (a backlog after a stop): a sweep
     * unpublishes them all, in several units. In one unit it failed with EntryTooLargeException,
     * and every later sweep failed the same while more expired.
     */
    @Test
    void aSweepOfMoreExpiredFragmentsThanOneUnitHoldsUnpublishesThemAll() {
        Clock[] now = {Clock.fixed(Instant.ofEpochSecond(1000), ZoneOffset.UTC)};
        Clock clock = following(now);
        try (HtodStore store = Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20)
                .durability(Durability.NONE).open()) {
            FragmentCache c = FragmentCache.open(store, "site", clock);
            int n = 4 * FragmentCache.SWEEP_UNIT;
            List<Change> unit = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                unit.add(Change.publish("/f" + i + ".html", "fragment number " + i + " " + "x".repeat(40),
                        Duration.ofSeconds(1)));
                if (unit.size() == 200 || i == n - 1) {
                    c.apply(unit);
                    unit.clear();
                }
            }
            now[0] = Clock.offset(now[0], Duration.ofSeconds(2));
            PublishResult r = c.sweepExpired();
            assertEquals(n, r.changed().size());
            assertEquals(0, c.fragmentCount());
            assertEquals(0, c.expiringCount());
        }
    }

    /**
     * One expired fragment whose pages, rebuilt without it, exceed a unit of the store alone: the
     * sweep unpublishes every other expired fragment and then reports that one. It stopped at it,
     * so that the fragments after it never expired.
     */
    @Test
    void aFragmentTooLargeToSweepDoesNotHoldTheOthersBack() {
        Clock[] now = {Clock.fixed(Instant.ofEpochSecond(1000), ZoneOffset.UTC)};
        try (HtodStore store = Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20)
                .durability(Durability.NONE).open()) {
            FragmentCache c = FragmentCache.open(store, "site", following(now));
            c.publish("/a.html", "A", Duration.ofSeconds(1));
            c.publish("/f.html", "F", Duration.ofSeconds(1));
            c.publish("/b.html", "B", Duration.ofSeconds(1));
            for (int i = 0; i < 300; i++) { // 300 pages of 1 KB include /f.html: a rebuild of 300 KB
                c.publish("/p" + i + ".html", "x".repeat(1000) + "<!--#include virtual=\"/f.html\" -->");
            }
            now[0] = Clock.offset(now[0], Duration.ofSeconds(2));
            assertThrows(EntryTooLargeException.class, c::sweepExpired);
            assertNull(c.source("/a.html"));
            assertNull(c.source("/b.html"));
            assertEquals("F", c.source("/f.html"), "the one too large stays, reported");
        }
    }

    /**
     * A page that includes one large fragment thousands of times is refused as too large while it
     * is assembled, and the cache goes on working. It was built whole in memory first (a publish
     * of 660 KB naming a fragment of 100 KB 20,000 times) and ran the process out of memory.
     */
    @Test
    void aPageAssemblingPastWhatTheStoreHoldsIsRefusedBeforeItIsBuilt() {
        try (HtodStore store = memory()) {
            FragmentCache c = FragmentCache.open(store, "site");
            c.publish("/leaf.html", "x".repeat(10_000));
            String amp = "<!--#include virtual=\"/leaf.html\" -->".repeat(20_000);
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long id = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(id);
            assertThrows(EntryTooLargeException.class, () -> c.publish("/amp.html", amp));
            long allocated = threads.getThreadAllocatedBytes(id) - before;
            // The 200 MB page is never built: what is allocated is the source's parse and some 60 KB of text.
            assertTrue(allocated < 50L << 20, "allocated refusing it: " + allocated);
            assertNull(c.source("/amp.html"), "nothing of the refused publish written");
            c.publish("/ok.html", "[<!--#include virtual=\"/leaf.html\" -->]");
            assertEquals(10_002, c.page("/ok.html").length());
        }
    }

    /** A clock that reads {@code now[0]}, which the test moves. */
    private static Clock following(Clock[] now) {
        return new Clock() {
            @Override
            public Instant instant() {
                return now[0].instant();
            }

            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId z) {
                return this;
            }
        };
    }
}
