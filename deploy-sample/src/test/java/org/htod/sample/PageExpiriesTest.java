package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
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

/**
 * The expiry a page is read with while a unit that changes it is applied: pages are read from
 * within the unit's apply, before the cache applies it and after, on a clock that moves only when
 * told. It must hold for the text before the unit and the text after it, and be no earlier than
 * needed: it was "now" (max-age 0) for every such read once any fragment had a time to live.
 */
class PageExpiriesTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path dir;
    private HtodStore store;
    private final MovingClock clock = new MovingClock();
    private FragmentCache cache;
    private PageExpiries expiries;

    @BeforeEach
    void open() {
        store = Htod.builder(dir.resolve("site.htod")).durability(Durability.NONE).open();
        cache = FragmentCache.open(store, "site", clock);
        expiries = new PageExpiries(cache, clock);
    }

    @AfterEach
    void close() {
        store.close();
    }

    private static String include(String path) {
        return "<!--#include virtual=\"" + path + "\" -->";
    }

    /** Applies {@code unit}, reading {@code page} just before the cache applies it and just after, within it. */
    private List<PageExpiries.Read> publishReading(String page, Change... unit) {
        List<PageExpiries.Read> reads = new ArrayList<>();
        expiries.publish(List.of(unit), u -> {
            reads.add(expiries.read(page));
            PublishResult r = cache.apply(u);
            reads.add(expiries.read(page));
            return r;
        });
        return reads;
    }

    private void publish(Change... unit) {
        expiries.publish(List.of(unit), cache::apply);
    }

    /**
     * A page read while a fragment under it is published again keeps the expiry under it, the
     * same before and after (here a minute away): it was given "now". Whether its expiry was kept
     * from an earlier read or not (then the read walks while the unit is applied).
     */
    @Test
    void aPageBeingRebuiltKeepsTheExpiryUnderIt() {
        publish(Change.publish("/f.html", "F1", Duration.ofSeconds(60)),
                Change.publish("/p.html", "<p>" + include("/f.html") + "</p>"));
        assertEquals(T0.plusSeconds(60), expiries.read("/p.html").earliest(), "kept from this read on");
        clock.advance(Duration.ofSeconds(1));
        List<PageExpiries.Read> reads = publishReading("/p.html", Change.publish("/f.html", "F2", Duration.ofSeconds(59)));
        assertEquals("<p>F1</p>", reads.get(0).text());
        assertEquals("<p>F2</p>", reads.get(1).text());
        for (PageExpiries.Read r : reads) {
            assertEquals(T0.plusSeconds(60), r.earliest(), "the expiry under the text, before and after");
        }
        // Nothing kept now (the unit forgot the page): the read walks while the next unit is applied.
        reads = publishReading("/p.html", Change.publish("/f.html", "F3", Duration.ofSeconds(59)));
        assertEquals("<p>F3</p>", reads.get(1).text());
        for (PageExpiries.Read r : reads) {
            assertEquals(T0.plusSeconds(60), r.earliest(), "walked while the unit is applied");
        }
        assertEquals(T0.plusSeconds(60), expiries.read("/p.html").earliest(), "after the unit");
    }

    /**
     * The expiry holds for the text after the unit too: a page published again to include a
     * fragment that expires sooner (already published, and not changed by the unit), or a fragment
     * under it given a shorter time to live, is read with the sooner expiry from the start of the
     * unit. The expiry kept for the page before the unit alone would reach past it.
     */
    @Test
    void aPageBeingRebuiltIsNotReadPastAnExpiryTheUnitBringsUnderIt() {
        publish(Change.publish("/f.html", "F", Duration.ofSeconds(60)),
                Change.publish("/soon.html", "SOON", Duration.ofSeconds(20)),
                Change.publish("/p.html", "<p>" + include("/f.html") + "</p>"));
        assertEquals(T0.plusSeconds(60), expiries.read("/p.html").earliest());
        List<PageExpiries.Read> reads = publishReading("/p.html",
                Change.publish("/p.html", "<p>" + include("/f.html") + include("/soon.html") + "</p>"));
        assertEquals("<p>FSOON</p>", reads.get(1).text());
        for (PageExpiries.Read r : reads) {
            assertEquals(T0.plusSeconds(20), r.earliest(), "the included fragment's expiry");
        }
        assertEquals(T0.plusSeconds(60), expiries.read("/f.html").earliest());
        reads = publishReading("/p.html", Change.publish("/f.html", "F", Duration.ofSeconds(5)));
        for (PageExpiries.Read r : reads) {
            assertEquals(T0.plusSeconds(5), r.earliest(), "the shorter time to live");
        }
    }

    /**
     * While a sweep runs, a page it does not touch is read with the expiry kept for it, and one
     * that includes a fragment being swept with that fragment's expiry, which has passed (max-age
     * 0: its text may still show the fragment): every page read during a sweep was given "now".
     */
    @Test
    void aSweepLeavesTheExpiryKeptForAPage() {
        publish(Change.publish("/gone.html", "GONE", Duration.ofSeconds(10)),
                Change.publish("/later.html", "LATER", Duration.ofSeconds(120)),
                Change.publish("/p.html", "<p>" + include("/gone.html") + "</p>"),
                Change.publish("/q.html", "<q>" + include("/later.html") + "</q>"));
        assertEquals(T0.plusSeconds(10), expiries.read("/p.html").earliest());
        assertEquals(T0.plusSeconds(120), expiries.read("/q.html").earliest());
        clock.advance(Duration.ofSeconds(30));
        List<PageExpiries.Read> during = new ArrayList<>();
        PublishResult swept = expiries.sweep(() -> {
            during.add(expiries.read("/q.html"));
            PublishResult r = cache.sweepExpired();
            during.add(expiries.read("/q.html"));
            during.add(expiries.read("/p.html"));
            return r;
        });
        assertEquals(List.of("/gone.html"), swept.changed());
        for (PageExpiries.Read r : during.subList(0, 2)) {
            assertEquals(T0.plusSeconds(120), r.earliest(), "kept: the sweep does not touch the page");
        }
        assertEquals("<p></p>", during.get(2).text());
        assertEquals(T0.plusSeconds(10), during.get(2).earliest(), "the swept fragment's, which has passed");
        assertEquals(null, expiries.read("/p.html").earliest(), "nothing under it expires after the sweep");
        assertTrue(expiries.read("/q.html").earliest().isAfter(clock.instant()));
    }

    /** A clock that moves only when told. */
    private static final class MovingClock extends Clock {
        private volatile Instant now = T0;

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("one zone");
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
