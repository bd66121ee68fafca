package org.htod.table;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;

/**
 * The entry: one heap block per key, chained per bucket. Numbers big-endian; offsets within the
 * block's payload (the heap's 48-byte block header comes before it).
 *
 * <pre>
 *  0   8  next        handle of the next entry in the bucket's chain, 0 at the end.
 *                     OUTSIDE the checksum: unlinking a successor or moving the entry in a
 *                     doubling rewrites these 8 bytes alone, in place, as one aligned write
 *                     (the payload starts 48 bytes into a block aligned to 64, so offset 0 is
 *                     8-byte aligned and never straddles a sector). Validated as a handle
 *                     (grain-aligned address inside the heap, non-zero size) when followed.
 *  8   8  tableId     random id of the table the entry belongs to; lets recovery tell an
 *                     unreachable entry of a table from any other block
 * 16   8  hash        Hashing.hash(key); its low bits choose the bucket
 * 24   8  version     1 when the key is inserted, +1 on each replacement
 * 32   8  expiry      epoch milliseconds after which the entry is dead, 0 for never
 * 40   4  keyLength   k, 0 .. MAX_KEY (64 KiB)
 * 44   4  valueLength v, 0 .. MAX_VALUE (256 MiB)
 * 48   k  key
 * 48+k v  value
 * 48+k+v 4 crc32c     CRC32C of bytes 8 .. 48+k+v-1: everything but next and itself
 * </pre>
 *
 * An entry is written whole, by the allocation that creates it (one device write), and is never
 * rewritten except for {@code next}: a replacement writes a new entry and relinks.
 */
final class Entries {
    static final int NEXT_OFFSET = 0;
    static final int TABLE_ID_OFFSET = 8;
    static final int HASH_OFFSET = 16;
    static final int VERSION_OFFSET = 24;
    static final int EXPIRY_OFFSET = 32;
    static final int KEY_LENGTH_OFFSET = 40;
    static final int VALUE_LENGTH_OFFSET = 44;
    static final int KEY_OFFSET = 48;
    static final int CRC_SIZE = 4;
    /** Fixed bytes per entry: the fields before the key plus the CRC after the value. */
    static final int OVERHEAD = KEY_OFFSET + CRC_SIZE;

    /** Largest key, in bytes. */
    static final int MAX_KEY = 64 * 1024;
    /** Largest value, in bytes: 256 MiB. */
    static final int MAX_VALUE = 256 * 1024 * 1024;

    /**
     * Bytes read first when following a chain: the fixed fields and, for entries up to a page,
     * key and value, so that a lookup reads such an entry once. A page costs the page cache no
     * more than 512 bytes do.
     */
    static final int PREFIX = 4096;

    private Entries() {}

    static int length(int keyLength, int valueLength) {
        return OVERHEAD + keyLength + valueLength;
    }

    static ByteBuffer encode(long next, long tableId, long hash, long version, long expiry, byte[] key, byte[] value) {
        ByteBuffer b = ByteBuffer.allocate(length(key.length, value.length));
        b.putLong(NEXT_OFFSET, next);
        b.putLong(TABLE_ID_OFFSET, tableId);
        b.putLong(HASH_OFFSET, hash);
        b.putLong(VERSION_OFFSET, version);
        b.putLong(EXPIRY_OFFSET, expiry);
        b.putInt(KEY_LENGTH_OFFSET, key.length);
        b.putInt(VALUE_LENGTH_OFFSET, value.length);
        b.position(KEY_OFFSET);
        b.put(key).put(value);
        b.putInt(crc(b, b.position()));
        return b.flip();
    }

    static int crc(ByteBuffer b, int end) {
        CRC32C c = new CRC32C();
        ByteBuffer d = b.duplicate();
        d.limit(end).position(TABLE_ID_OFFSET);
        c.update(d);
        return (int) c.getValue();
    }

    /**
     * The fixed fields of an entry whose first bytes are in {@code b} (from position 0), checked
     * for plausibility but not yet against the CRC.
     */
    static final class Head {
        long next;
        long tableId;
        long hash;
        long version;
        long expiry;
        int keyLength;
        int valueLength;

        int length() {
            return Entries.length(keyLength, valueLength);
        }
    }

    static Head head(ByteBuffer b, long handle, Locator where) {
        Head h = new Head();
        h.next = b.getLong(NEXT_OFFSET);
        h.tableId = b.getLong(TABLE_ID_OFFSET);
        h.hash = b.getLong(HASH_OFFSET);
        h.version = b.getLong(VERSION_OFFSET);
        h.expiry = b.getLong(EXPIRY_OFFSET);
        h.keyLength = b.getInt(KEY_LENGTH_OFFSET);
        h.valueLength = b.getInt(VALUE_LENGTH_OFFSET);
        if (h.keyLength < 0 || h.keyLength > MAX_KEY || h.valueLength < 0 || h.valueLength > MAX_VALUE) {
            throw where.corrupt(handle, "an entry with key length 0.." + MAX_KEY + " and value length 0.." + MAX_VALUE,
                    "key length " + h.keyLength + " and value length " + h.valueLength);
        }
        return h;
    }

    /** Checks the CRC of a complete entry held in {@code b} from position 0. */
    static void checkCrc(ByteBuffer b, Head h, long handle, Locator where) {
        int end = KEY_OFFSET + h.keyLength + h.valueLength;
        int stored = b.getInt(end);
        int actual = crc(b, end);
        if (stored != actual) {
            throw where.corrupt(handle, "entry CRC32C 0x" + Integer.toHexString(actual),
                    "0x" + Integer.toHexString(stored));
        }
    }

    static byte[] key(ByteBuffer b, Head h) {
        byte[] k = new byte[h.keyLength];
        b.get(KEY_OFFSET, k);
        return k;
    }

    static byte[] value(ByteBuffer b, Head h) {
        byte[] v = new byte[h.valueLength];
        b.get(KEY_OFFSET + h.keyLength, v);
        return v;
    }

    /** Whether the key stored in {@code b} equals {@code key} (the key bytes must be in {@code b}). */
    static boolean keyEquals(ByteBuffer b, Head h, byte[] key) {
        if (h.keyLength != key.length) {
            return false;
        }
        return b.duplicate().position(KEY_OFFSET).limit(KEY_OFFSET + h.keyLength).equals(ByteBuffer.wrap(key));
    }

    /** Names the block an error is about: heap address and the device it lives on. */
    interface Locator {
        CorruptStoreException corrupt(long handle, String expected, String found);
    }
}
