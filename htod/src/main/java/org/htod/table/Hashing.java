package org.htod.table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The hash function of version-1 tables ({@link TableHash#FIXED_SEED}), part of the on-disk
 * format: their entries store it, and its low bits choose the bucket, so it must never change.
 * Anyone can compute it, and so craft keys that share a bucket: tables created now hash with a
 * key of their own instead (see {@link TableHash}).
 *
 * <p>MurmurHash64A (Austin Appleby, public domain) of the key bytes with seed {@link #SEED}, read
 * as little-endian 64-bit words, followed by the MurmurHash3 64-bit finalizer so that the low
 * bits, which pick the bucket and the lock stripe, depend on every input bit.
 */
final class Hashing {
    static final long SEED = 0x48544f4448415348L; // "HTODHASH"
    private static final long M = 0xc6a4a7935bd1e995L;
    private static final int R = 47;
    /** One little-endian 8-byte load: a byte at a time, a long key's hash was a twentieth of a get. */
    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private Hashing() {}

    static long hash(byte[] key) {
        int len = key.length;
        long h = SEED ^ (len * M);
        int words = len >>> 3;
        for (int i = 0; i < words; i++) {
            long k = (long) LE_LONG.get(key, i << 3);
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
