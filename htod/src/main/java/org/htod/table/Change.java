package org.htod.table;

/** What a {@link Mutation} decided: write a value (with an expiry, 0 for none), or remove. */
public final class Change {
    public static final Change REMOVE = new Change(null, 0);

    final byte[] value;
    final long expiry;

    private Change(byte[] value, long expiry) {
        this.value = value;
        this.expiry = expiry;
    }

    /** Writes {@code value}, expiring at {@code expiry} epoch milliseconds (0 for never). */
    public static Change put(byte[] value, long expiry) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        return new Change(value, expiry);
    }

    boolean isRemove() {
        return value == null;
    }
}
