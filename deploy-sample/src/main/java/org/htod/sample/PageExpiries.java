package org.htod.sample;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;
import org.htod.fragment.Include;
import org.htod.fragment.MalformedIncludeException;
import org.htod.fragment.PublishResult;

/**
 * Pages read with the earliest expiry among each page and everything it includes, directly or
 * through composites, which its max-age must not reach past. Finding that expiry walks the page's
 * includes in the dependency graph (some 4,300 nodes under the demo's home page), and every page
 * read did so while any fragment had a time to live; it is now kept per page, in a {@link Slot}.
 *
 * <p>Every unit written to the cache goes through {@link #publish} or {@link #sweep}, one at a
 * time. A slot holds until a unit that may change its page, or anything under it, is applied: a
 * publish puts a {@link Changing} marker in place of the slots of the pages it changes and of every
 * page over them (the graph's {@code affected}) before it applies, and removes the markers after,
 * with the slots of what its result names as changed or rebuilt; a sweep, whose fragments are not
 * known beforehand, is counted in {@link #sweeps}, odd while it runs, and removes the slots of what
 * it unpublished and rebuilt. A fragment whose time to live passes needs no telling: what is kept
 * is an instant, and the max-age from it reaches 0 until the sweep unpublishes the fragment.
 *
 * <p>A page's text and its expiry are read at different moments, and a unit applied in between
 * could pair a text with the expiry of another state of the site: served with a max-age longer
 * than what the text shows allows. So a read serves an expiry only if the entry it was found by
 * is still in place once the text is read; else it reads again. An expiry found by a walk is
 * kept only if no unit, sweeps included, touched the page meanwhile.
 *
 * <p>While a unit is applied, a page read may get the text from before it or from after it, so
 * its expiry is one that holds for both: no later than the earliest of the two states. The
 * marker has it ({@link Changing#bound}): the least of what was kept for the page and of what the
 * unit can bring under any page ({@link #brought}); or, where nothing was kept, a walk made while
 * the marker is in place, with what the unit can bring. A page being rebuilt was served with
 * max-age 0 while any fragment anywhere had a time to live: under steady publishing, the pages
 * over the fragments published most (the home page among them) nearly always. During a sweep a
 * kept expiry holds as it is, since a sweep only takes fragments away; where none is kept, a walk
 * could miss an expired fragment the sweep is taking out of a text that still shows it, and the
 * page is served with max-age 0, as it is where a unit begins or ends during each of a read's tries.
 */
final class PageExpiries {
    /** A page read: its text, and the earliest expiry under it (null if nothing under it expires). */
    record Read(String text, Instant earliest) {}

    /** What is kept of a page until a unit may change it. */
    private static final class Slot {
        /** Null until a read finds it; then the earliest expiry, or {@link #NEVER}. */
        volatile Instant earliest;
    }

    /** In a page's place while a publish that may change it is applied; one per page and unit. */
    private static final class Changing {
        /** What the unit can bring under any page: see {@link #brought}. */
        final Instant brought;
        /**
         * No later than the earliest expiry under the page before the unit and after it; null
         * until known, then set by the publish from what was kept, or by a read from its walk.
         */
        volatile Instant bound;

        Changing(Instant brought, Instant kept) {
            this.brought = brought;
            this.bound = kept == null ? null : min(kept, brought);
        }
    }

    /** Kept for a page under which nothing expires. */
    private static final Instant NEVER = Instant.MAX;
    /** Times a read tries before it gives up on an expiry: each try met a unit that began or ended. */
    private static final int TRIES = 3;

    private final FragmentCache cache;
    /** The clock the cache's times to live are measured by. */
    private final Clock clock;
    /** A {@link Slot} per page read since it last changed, or a {@link Changing} marker. */
    private final ConcurrentHashMap<String, Object> pages = new ConcurrentHashMap<>();
    /** Sweeps begun and ended: odd while one runs. */
    private final AtomicLong sweeps = new AtomicLong();
    /** Held while a unit is applied: the markers of one are never taken for another's. */
    private final Object units = new Object();

    /** @param clock the clock {@code cache} was opened with */
    PageExpiries(FragmentCache cache, Clock clock) {
        this.cache = cache;
        this.clock = clock;
    }

    /** The page {@code page} and the earliest expiry under that text; null if it is not published. */
    Read read(String page) {
        for (int i = 0; i < TRIES; i++) {
            long s = sweeps.get();
            Object o = pages.computeIfAbsent(page, p -> new Slot());
            Instant known = o instanceof Slot slot ? slot.earliest : ((Changing) o).bound;
            Instant earliest = known;
            if (earliest == null) {
                if (o instanceof Slot && (s & 1) == 1) {
                    break; // a sweep runs, and a walk could miss what it is taking away
                }
                earliest = o instanceof Slot && cache.expiringCount() == 0 ? NEVER : walk(List.of(page));
            }
            String text = cache.page(page);
            if (text == null) {
                if (o instanceof Slot) {
                    pages.remove(page, o); // nothing is kept for a path that is not a page
                }
                return null;
            }
            if (pages.get(page) != o) {
                continue; // a unit began or ended meanwhile: the text may be from after it
            }
            if (known == null) {
                if (o instanceof Slot slot) {
                    if (sweeps.get() != s) {
                        continue; // a sweep began meanwhile: the walk may have missed what it took away
                    }
                    slot.earliest = earliest;
                } else {
                    // Walked while the unit was applied: what the unit changes, it may have seen in
                    // either state or in neither; what the unit can bring covers those.
                    Changing c = (Changing) o;
                    earliest = min(earliest, c.brought);
                    c.bound = earliest;
                }
            }
            return new Read(text, earliest == NEVER ? null : earliest);
        }
        // Units kept beginning or ending, or a sweep runs: the text's expiry is not known.
        String text = cache.page(page);
        if (text == null) {
            return null;
        }
        return new Read(text, cache.expiringCount() == 0 ? null : clock.instant());
    }

    /** Applies a publish's unit through {@code apply}: see the class comment. */
    PublishResult publish(List<Change> unit, Function<List<Change>, PublishResult> apply) {
        synchronized (units) {
            Set<String> marked = new HashSet<>();
            for (Change c : unit) {
                marked.add(c.path());
            }
            // Every page over a changed fragment, whether the unit adds an edge on the way or
            // removes one: only the changed fragments' own includes change.
            marked.addAll(cache.graph().affected(marked));
            boolean expiring = cache.expiringCount() > 0;
            Instant brought = brought(unit, expiring);
            for (String p : marked) {
                // A read may still set the slot's expiry until the marker is in place: from before the unit.
                Instant kept = !expiring ? NEVER : pages.get(p) instanceof Slot slot ? slot.earliest : null;
                pages.put(p, new Changing(brought, kept));
            }
            PublishResult r = null;
            try {
                r = apply.apply(unit);
                return r;
            } finally {
                forget(r, marked);
            }
        }
    }

    /**
     * The earliest expiry that {@code unit} can bring under a page, or take out of it, beyond what
     * was under the page before it: the times to live it sets, and, where anything expired before
     * it ({@code expiring}), the expiries its fragments had and those under their includes, old
     * and new. A fragment under a page after the unit is under it through the same edges as before,
     * or through an include of a changed fragment, below which the edges are the old ones up to the
     * next changed fragment. Read before the unit is applied, on the state before it.
     */
    private Instant brought(List<Change> unit, boolean expiring) {
        Instant earliest = NEVER;
        long now = clock.millis(); // the unit's own clock reading comes later: its expiries no earlier
        Set<String> includes = new HashSet<>();
        for (Change c : unit) {
            if (c.ttl() != null) {
                earliest = min(earliest, plus(now, c.ttl()));
            }
            if (expiring) {
                Instant had = cache.expiresAt(c.path());
                if (had != null) {
                    earliest = min(earliest, had);
                }
                includes.addAll(cache.graph().dependencies(c.path()));
                if (!c.isUnpublish()) {
                    try {
                        for (Include inc : FragmentCache.includes(c.source())) {
                            includes.add(inc.path());
                        }
                    } catch (MalformedIncludeException e) {
                        // The unit is refused whole, with nothing written: it brings nothing.
                    }
                }
            }
        }
        return includes.isEmpty() ? earliest : min(earliest, walk(includes));
    }

    /** Runs a sweep of the expired fragments: see the class comment. */
    PublishResult sweep(Supplier<PublishResult> sweep) {
        synchronized (units) {
            sweeps.incrementAndGet();
            PublishResult r = null;
            try {
                r = sweep.get();
                return r;
            } finally {
                forget(r, Set.of());
                sweeps.incrementAndGet();
            }
        }
    }

    /**
     * Forgets the pages {@code r} names and {@code marked}; every page where {@code r} is null: a
     * unit that failed is refused whole as a rule, but a failing store, or a sweep that failed
     * after some of its units, may have written part of what it was given.
     */
    private void forget(PublishResult r, Set<String> marked) {
        if (r == null) {
            pages.clear();
            return;
        }
        for (String p : marked) {
            pages.remove(p);
        }
        for (String p : r.changed()) {
            pages.remove(p);
        }
        for (String p : r.rebuilt()) {
            pages.remove(p);
        }
    }

    /** The earliest expiry among {@code roots} and what they include, or {@link #NEVER}. */
    private Instant walk(Collection<String> roots) {
        Instant earliest = NEVER;
        Set<String> seen = new HashSet<>(roots);
        ArrayDeque<String> next = new ArrayDeque<>(roots);
        while (!next.isEmpty()) {
            String f = next.poll();
            Instant e = cache.expiresAt(f);
            if (e != null && e.isBefore(earliest)) {
                earliest = e;
            }
            for (String d : cache.graph().dependencies(f)) {
                if (seen.add(d)) {
                    next.add(d);
                }
            }
        }
        return earliest;
    }

    /**
     * {@code now} (milliseconds) plus {@code ttl}: no later than the expiry the cache sets for it
     * at {@code now} or after, which saturates at the last millisecond.
     */
    private static Instant plus(long now, Duration ttl) {
        long ms;
        try {
            ms = ttl.toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        return Instant.ofEpochMilli(ms > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + ms);
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }
}
