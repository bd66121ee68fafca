package org.htod.fragment;

import java.time.Duration;
import java.util.Objects;

/**
 * One change a publish applies: a fragment published (with an optional time to live) or
 * unpublished. Several go into one {@link FragmentCache#apply} as one unit.
 *
 * @param path the fragment's path
 * @param source the new source, or null to unpublish
 * @param ttl how long the fragment lives before a sweep unpublishes it, or null for ever
 */
public record Change(String path, String source, Duration ttl) {
    public Change {
        String why = Includes.pathProblem(Objects.requireNonNull(path, "path"));
        if (why != null) {
            throw new IllegalArgumentException(why);
        }
        if (ttl != null && (ttl.isNegative() || ttl.isZero())) {
            throw new IllegalArgumentException("a time to live must be positive, found " + ttl);
        }
        if (source == null && ttl != null) {
            throw new IllegalArgumentException("an unpublish has no time to live");
        }
    }

    /**
     * When a fragment published at {@code now} (milliseconds) expires: saturating, so that a time
     * to live as long as "for ever" (a {@code Duration} beyond what milliseconds or the clock can
     * add up to) never expires, where {@code toMillis()} threw, failing every change of its unit,
     * or the sum wrapped below {@code now} and the next sweep unpublished the fragment.
     */
    long expiresAt(long now) {
        long ms;
        try {
            ms = ttl.toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        return ms > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + Math.max(1, ms);
    }

    public static Change publish(String path, String source) {
        return new Change(path, Objects.requireNonNull(source, "source"), null);
    }

    public static Change publish(String path, String source, Duration ttl) {
        return new Change(path, Objects.requireNonNull(source, "source"), Objects.requireNonNull(ttl, "ttl"));
    }

    public static Change unpublish(String path) {
        return new Change(path, null, null);
    }

    public boolean isUnpublish() {
        return source == null;
    }
}
