package org.htod.table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed
 * pseudorandom function of a byte string, 64 bits out of a 128-bit key. Without the key nobody
 * can compute which keys share a bucket, so nobody can flood one chain; every output bit depends
 * on every input bit, so the low bits that choose the bucket and the lock stripe need no
 * finalizer. The key is {@code k0} and {@code k1}, the little-endian reading of its first and
 * last eight bytes, as in the paper's reference code.
 */
final class SipHash {
    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private SipHash() {}

    static long hash24(long k0, long k1, byte[] m) {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        int len = m.length;
        int end = len & ~7;
        // Each 8-byte word, little-endian, then a last one of the remaining bytes with the
        // length's low byte on top: two rounds each.
        for (int i = 0; i <= end; i += 8) {
            long w;
            if (i < end) {
                w = (long) LE_LONG.get(m, i);
            } else {
                w = (long) len << 56;
                for (int j = len - 1; j >= end; j--) {
                    w |= (m[j] & 0xffL) << (8 * (j - end));
                }
            }
            v3 ^= w;
            for (int r = 0; r < 2; r++) {
                v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
                v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
                v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
                v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            }
            v0 ^= w;
        }
        v2 ^= 0xff;
        for (int r = 0; r < 4; r++) {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }
}
