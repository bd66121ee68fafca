package org.htod.table;

import java.security.SecureRandom;

/**
 * The hash function of one table, fixed when the table is created and named by its header's
 * {@code formatVersion}: an entry stores its key's hash, whose low bits choose the bucket and the
 * lock stripe.
 *
 * <ul>
 *   <li>Version 2, every table created now: SipHash-2-4 ({@link SipHash}) under a 128-bit key
 *       drawn from {@link SecureRandom} for that table alone and kept in its header. Keys come
 *       from outsiders (URLs, session ids); with a hash anyone can compute they could craft keys
 *       that all land in one bucket, whose chain a lookup walks at one device read per entry.
 *   <li>Version 1, tables written before: {@link Hashing}'s MurmurHash64A with a fixed seed, kept
 *       so that they open and work as they are.
 * </ul>
 *
 * The key is a secret of the store: {@link #toString} leaves it out.
 */
public final class TableHash {
    /** The function of version-1 tables. */
    static final TableHash FIXED_SEED = new TableHash(1, 0, 0);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** 1 (fixed-seed MurmurHash64A) or 2 (keyed SipHash-2-4): the table header's {@code formatVersion}. */
    final int formatVersion;
    final long k0;
    final long k1;

    private TableHash(int formatVersion, long k0, long k1) {
        this.formatVersion = formatVersion;
        this.k0 = k0;
        this.k1 = k1;
    }

    /** The function of a new table: SipHash-2-4 under a key of its own. */
    static TableHash fresh() {
        return keyed(RANDOM.nextLong(), RANDOM.nextLong());
    }

    /** SipHash-2-4 under the key {@code k0}, {@code k1} (a version-2 header's). */
    static TableHash keyed(long k0, long k1) {
        return new TableHash(2, k0, k1);
    }

    /** The hash of {@code key} in a table of this function. */
    public long hash(byte[] key) {
        return formatVersion == 1 ? Hashing.hash(key) : SipHash.hash24(k0, k1, key);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TableHash h && h.formatVersion == formatVersion && h.k0 == k0 && h.k1 == k1;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(k0 * 31 + k1) * 31 + formatVersion;
    }

    @Override
    public String toString() {
        return formatVersion == 1 ? "MurmurHash64A, fixed seed (version 1)" : "SipHash-2-4, keyed (version 2)";
    }
}
