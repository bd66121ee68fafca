package org.htod.table;

import java.util.function.LongSupplier;

/**
 * One entry as read from the table: its key and value bytes and the fields stored beside them.
 * {@code value} is null when only the key was read (key iteration). The arrays belong to the
 * caller; the table keeps no reference to them.
 */
public final class StoredEntry {
    final long handle;
    final long next;
    final long hash;
    final long version;
    final long expiry;
    final byte[] key;
    final byte[] value;

    StoredEntry(long handle, long next, long hash, long version, long expiry, byte[] key, byte[] value) {
        this.handle = handle;
        this.next = next;
        this.hash = hash;
        this.version = version;
        this.expiry = expiry;
        this.key = key;
        this.value = value;
    }

    /** An entry that is not (yet) in a table: the write layer's buffered value of a key. */
    public static StoredEntry buffered(long hash, long version, long expiry, byte[] key, byte[] value) {
        return new StoredEntry(0, 0, hash, version, expiry, key, value);
    }

    public byte[] key() {
        return key;
    }

    /** The value bytes, or null if this entry was read without its value. */
    public byte[] value() {
        return value;
    }

    /** Times this key has been written since it was last absent: 1 for a new key, +1 per replacement. */
    public long version() {
        return version;
    }

    /** Expiry time in epoch milliseconds, 0 for none. */
    public long expiry() {
        return expiry;
    }

    public long hash() {
        return hash;
    }

    public boolean expiredAt(long now) {
        return expiry != 0 && expiry <= now;
    }

    /**
     * {@link #expiredAt(long)} at {@code clock}'s time, read only when the entry has an expiry:
     * most have none, and a get then makes no clock call (a system call on some machines).
     */
    public boolean expiredAt(LongSupplier clock) {
        return expiry != 0 && expiry <= clock.getAsLong();
    }
}
