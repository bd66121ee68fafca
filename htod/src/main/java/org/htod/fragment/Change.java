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
