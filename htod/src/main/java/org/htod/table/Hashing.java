package org.htod.table;

/**
 * The hash of a key, part of the on-disk format: an entry stores it, and its low bits choose the
 * bucket, so it must never change for a given format version.
 *
 * <p>MurmurHash64A (Austin Appleby, public domain) of the key bytes with seed {@link #SEED}, read
 * as little-endian 64-bit words, followed by the MurmurHash3 64-bit finalizer so that the low
 * bits, which pick the bucket and the lock stripe, depend on every input bit.
 */
public final class Hashing {
    static final long SEED = 0x48544f4448415348L; // "HTODHASH"
    private static final long M = 0xc6a4a7935bd1e995L;
    private static final int R = 47;

    private Hashing() {}

    public static long hash(byte[] key) {
        int len = key.length;
        long h = SEED ^ (len * M);
        int words = len >>> 3;
        for (int i = 0; i < words; i++) {
            int o = i << 3;
            long k = (key[o] & 0xffL) | (key[o + 1] & 0xffL) << 8 | (key[o + 2] & 0xffL) << 16
                    | (key[o + 3] & 0xffL) << 24 | (key[o + 4] & 0xffL) << 32 | (key[o + 5] & 0xffL) << 40
                    | (key[o + 6] & 0xffL) << 48 | (key[o + 7] & 0xffL) << 56;
            k *= M;
            k ^= k >>> R;
            k *= M;
            h ^= k;
            h *= M;
        }
        int o = words << 3;
        int rest = len & 7;
        if (rest > 0) {
            for (int i = rest - 1; i >= 0; i--) {
                h ^= (key[o + i] & 0xffL) << (8 * i);
            }
            h *= M;
        }
        h ^= h >>> R;
        h *= M;
        h ^= h >>> R;
        // MurmurHash3 fmix64
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
