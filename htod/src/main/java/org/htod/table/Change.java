package org.htod.table;

/**
 * What a {@link Mutation} decided: write a value (with an expiry, 0 for none, and a version, 0
 * for the next one), or remove.
 */
public final class Change {
    public static final Change REMOVE = new Change(null, 0, 0);

    final byte[] value;
    final long expiry;
    final long version;

    private Change(byte[] value, long expiry, long version) {
        this.value = value;
        this.expiry = expiry;
        this.version = version;
    }

    /** Writes {@code value}, expiring at {@code expiry} epoch milliseconds (0 for never). */
    public static Change put(byte[] value, long expiry) {
        return put(value, expiry, 0);
    }

    /** Writes {@code value} with the version the caller chose ({@code version} 0: the next one). */
    public static Change put(byte[] value, long expiry, long version) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        if (version < 0) {
            throw new IllegalArgumentException("a version is at least 1 (0 for the next one), found " + version);
        }
        return new Change(value, expiry, version);
    }

    /**
     * The version a put without one gives a key whose version is {@code current}: the next,
     * saturating at {@link Long#MAX_VALUE}. A key put with that version (an application's "last")
     * keeps it through later puts; past it the sum wrapped to a negative version, which every
     * versioned put then beat (the Thomas write rule undone) and which a copy, a compaction and
     * an export refused.
     */
    public static long after(long current) {
        return current == Long.MAX_VALUE ? current : current + 1;
    }

    public boolean isRemove() {
        return value == null;
    }

    public byte[] value() {
        return value;
    }

    public long expiry() {
        return expiry;
    }

    /** The version the caller chose, 0 for the next one. */
    public long version() {
        return version;
    }
}
