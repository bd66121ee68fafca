package org.htod.sample;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.htod.fragment.Change;
import org.htod.fragment.FragmentCache;
import org.htod.fragment.PublishResult;

/**
 * Pages read with the earliest expiry among each page and everything it includes, directly or
 * through composites, which its max-age must not reach past. Finding that expiry walks the page's
 * includes in the dependency graph (some 4,300 nodes under the demo's home page), and every page
 * read did so while any fragment had a time to live; it is now kept per page, in a {@link Slot}.
 *
 * <p>Every unit written to the cache goes through {@link #publish} or {@link #sweep}, one at a
 * time. A slot holds until a unit that may change its page, or anything under it, is applied: a
 * publish puts a marker in place of the slots of the pages it changes and of every page over them
 * (the graph's {@code affected}) before it applies, and removes the markers after, with the slots
 * of what its result names as changed or rebuilt; a sweep, whose fragments are not known
 * beforehand, is counted in {@link #sweeps}, odd while it runs, and removes the slots of what it
 * unpublished and rebuilt. A fragment whose time to live passes needs no telling: what is kept is
 * an instant, and the max-age from it reaches 0 until the sweep unpublishes the fragment.
 *
 * <p>A page's text and its expiry are read at different moments, and a unit applied in between
 * could pair a text with the expiry of another state of the site: served with a max-age longer
 * than what the text shows allows. So a read keeps what it found only if its slot is still in
 * place, and no sweep began, once the text is read: no unit touched the page meanwhile. Where one
 * did, or is being applied, the page is served with max-age 0 while anything has a time to live.
 */
final class PageExpiries {
    /** A page read: its text, and the earliest expiry under it (null if nothing under it expires). */
    record Read(String text, Instant earliest) {}

    /** What is kept of a page until a unit may change it. */
    private static final class Slot {
        /** Null until a read finds it; then the earliest expiry, or {@link #NEVER}. */
        volatile Instant earliest;
    }

    /** Kept for a page under which nothing expires. */
    private static final Instant NEVER = Instant.MAX;
    /** In a page's place while a publish that may change it is applied. */
    private static final Object CHANGING = new Object();

    private final FragmentCache cache;
    /** A {@link Slot} per page read since it last changed, or {@link #CHANGING}. */
    private final ConcurrentHashMap<String, Object> pages = new ConcurrentHashMap<>();
    /** Sweeps begun and ended: odd while one runs. */
    private final AtomicLong sweeps = new AtomicLong();
    /** Held while a unit is applied: the markers of one are never taken for another's. */
    private final Object units = new Object();

    PageExpiries(FragmentCache cache) {
        this.cache = cache;
    }

    /** The page {@code page} and the earliest expiry under that text; null if it is not published. */
    Read read(String page) {
        long s = sweeps.get();
        Object o = (s & 1) == 0 ? pages.computeIfAbsent(page, p -> new Slot()) : CHANGING;
        if (o instanceof Slot slot) {
            Instant kept = slot.earliest;
            Instant earliest = kept != null ? kept : cache.expiringCount() == 0 ? NEVER : walk(page);
            String text = cache.page(page);
            if (text == null) {
                pages.remove(page, slot); // nothing is kept for a path that is not a page
                return null;
            }
            if (pages.get(page) == slot && sweeps.get() == s) {
                slot.earliest = earliest;
                return new Read(text, earliest == NEVER ? null : earliest);
            }
        }
        // A unit that may change the page is being applied, or was while it was read: the text
        // may be from before or after it, and its expiry is not known.
        String text = cache.page(page);
        if (text == null) {
            return null;
        }
        return new Read(text, cache.expiringCount() == 0 ? null : Instant.now());
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
            for (String p : marked) {
                pages.put(p, CHANGING);
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

    /** The earliest expiry among {@code page} and what it includes, or {@link #NEVER}. */
    private Instant walk(String page) {
        Instant earliest = NEVER;
        Set<String> seen = new HashSet<>();
        ArrayDeque<String> next = new ArrayDeque<>();
        seen.add(page);
        next.add(page);
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
}
