package org.htod.table;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;

/**
 * The entry: one heap block per key, chained per bucket. Numbers big-endian; offsets within the
 * block's payload (the heap's 48-byte block header comes before it).
 *
 * <pre>
 *  0   8  next        handle of the next entry in the bucket's chain, 0 at the end
 *  8   4  nextCheck   {@link Links#check} of next and headCrc: next and nextCheck are rewritten
 *                     together, in place, by one aligned 12-byte write (the payload starts 48
 *                     bytes into a block aligned to 64, so bytes 0..15 never straddle a sector)
 *                     when a successor is unlinked or a doubling relinks; headCrc binds the link
 *                     to this entry, so that a link written to the wrong place does not check
 * 12   4  headCrc     CRC32C of bytes 16 .. 64+k-1: the fixed fields below and the key
 * 16   8  tableId     random id of the table the entry belongs to
 * 24   8  hash        the key's hash by the table's function (TableHash); its low bits choose the bucket
 * 32   8  version     1 when the key is inserted, +1 on each replacement, or the caller's version
 * 40   8  expiry      epoch milliseconds after which the entry is dead, 0 for never
 * 48   4  keyLength   k, 0 .. MAX_KEY (64 KiB)
 * 52   4  valueLength v, 0 .. MAX_VALUE (256 MiB)
 * 56   4  valueCrc    CRC32C of the value bytes
 * 60   4  reserved    0
 * 64   k  key
 * 64+k v  value
 * </pre>
 *
 * <p>Two checksums, so that a reader never uses a field it has not checked and never has to read
 * a large value to learn a key: {@code headCrc} is checked before the hash, expiry or key are
 * looked at (a key is never compared before it is known intact), {@code valueCrc} before a value
 * is handed out, {@code nextCheck} before a link is followed. An entry is written whole, by the
 * allocation that creates it (one device write), and never rewritten except for {@code next}
 * and {@code nextCheck}: a replacement writes a new entry and relinks.
 */
final class Entries {
    static final int NEXT_OFFSET = 0;
    static final int NEXT_CHECK_OFFSET = 8;
    static final int HEAD_CRC_OFFSET = 12;
    static final int TABLE_ID_OFFSET = 16;
    static final int HASH_OFFSET = 24;
    static final int VERSION_OFFSET = 32;
    static final int EXPIRY_OFFSET = 40;
    static final int KEY_LENGTH_OFFSET = 48;
    static final int VALUE_LENGTH_OFFSET = 52;
    static final int VALUE_CRC_OFFSET = 56;
    static final int KEY_OFFSET = 64;
    /** Fixed bytes per entry: the fields before the key. */
    static final int OVERHEAD = KEY_OFFSET;

    /** Largest key, in bytes. */
    static final int MAX_KEY = 64 * 1024;
    /** Largest value, in bytes: 256 MiB. */
    static final int MAX_VALUE = 256 * 1024 * 1024;

    /**
     * Largest block read whole on a miss when its value is not wanted (a larger one gives its
     * first {@code EntryLoader.HEAD_READ} bytes): the fixed fields, key and value of an entry up
     * to a page, so that a lookup reads such an entry once. A page costs the page cache no more
     * than 512 bytes do.
     */
    static final int PREFIX = 4096;

    private Entries() {}

    static int length(int keyLength, int valueLength) {
        return OVERHEAD + keyLength + valueLength;
    }

    /** The payload of a new entry. */
    static ByteBuffer encode(long next, long tableId, long hash, long version, long expiry, byte[] key, byte[] value) {
        ByteBuffer b = ByteBuffer.allocate(length(key.length, value.length));
        b.putLong(NEXT_OFFSET, next);
        b.putLong(TABLE_ID_OFFSET, tableId);
        b.putLong(HASH_OFFSET, hash);
        b.putLong(VERSION_OFFSET, version);
        b.putLong(EXPIRY_OFFSET, expiry);
        b.putInt(KEY_LENGTH_OFFSET, key.length);
        b.putInt(VALUE_LENGTH_OFFSET, value.length);
        b.put(KEY_OFFSET, key);
        b.put(KEY_OFFSET + key.length, value);
        b.putInt(VALUE_CRC_OFFSET, crc(b, KEY_OFFSET + key.length, value.length));
        int headCrc = crc(b, TABLE_ID_OFFSET, KEY_OFFSET - TABLE_ID_OFFSET + key.length);
        b.putInt(HEAD_CRC_OFFSET, headCrc);
        b.putInt(NEXT_CHECK_OFFSET, Links.check(next, headCrc));
        return b;
    }

    static int crc(ByteBuffer b, int from, int length) {
        CRC32C c = new CRC32C();
        ByteBuffer d = b.duplicate();
        d.limit(from + length).position(from);
        c.update(d);
        return (int) c.getValue();
    }

    /** The fixed fields of an entry, read only after its head CRC matched. */
    static final class Head {
        long next;
        long tableId;
        long hash;
        long version;
        long expiry;
        int keyLength;
        int valueLength;
        int valueCrc;

        int length() {
            return Entries.length(keyLength, valueLength);
        }
    }

    /**
     * Checks the lengths for plausibility and the head CRC over the fields and the key, which
     * {@code b} (from position 0) must hold whole, then decodes the fields.
     */
    static Head head(ByteBuffer b, long handle, Locator where) {
        int keyLength = b.getInt(KEY_LENGTH_OFFSET);
        int valueLength = b.getInt(VALUE_LENGTH_OFFSET);
        if (keyLength < 0 || keyLength > MAX_KEY || valueLength < 0 || valueLength > MAX_VALUE) {
            throw where.corrupt(handle, "an entry with key length 0.." + MAX_KEY + " and value length 0.." + MAX_VALUE,
                    "key length " + keyLength + " and value length " + valueLength);
        }
        if (b.limit() < KEY_OFFSET + keyLength) {
            throw where.corrupt(handle, "an entry whose key of " + keyLength + " bytes lies within its "
                    + b.limit() + " bytes", "a key running past them");
        }
        int stored = b.getInt(HEAD_CRC_OFFSET);
        int actual = crc(b, TABLE_ID_OFFSET, KEY_OFFSET - TABLE_ID_OFFSET + keyLength);
        if (stored != actual) {
            throw where.corrupt(handle, "entry head CRC32C 0x" + Integer.toHexString(actual) + " of its fields and key",
                    "0x" + Integer.toHexString(stored));
        }
        return headChecked(b);
    }

    /**
     * The fixed fields of an entry whose bytes were checked by {@link #head} (now, or before: the
     * entry cache's), decoded without computing the CRC again.
     */
    static Head headChecked(ByteBuffer b) {
        Head h = new Head();
        h.next = b.getLong(NEXT_OFFSET);
        h.tableId = b.getLong(TABLE_ID_OFFSET);
        h.hash = b.getLong(HASH_OFFSET);
        h.version = b.getLong(VERSION_OFFSET);
        h.expiry = b.getLong(EXPIRY_OFFSET);
        h.keyLength = b.getInt(KEY_LENGTH_OFFSET);
        h.valueLength = b.getInt(VALUE_LENGTH_OFFSET);
        h.valueCrc = b.getInt(VALUE_CRC_OFFSET);
        return h;
    }

    /** Key length stored in an entry's first bytes, unchecked: to know how much to read before {@link #head}. */
    static int rawKeyLength(ByteBuffer b) {
        return b.getInt(KEY_LENGTH_OFFSET);
    }

    /** Checks the value CRC of an entry whose value {@code b} holds at {@code valueAt}. */
    static void checkValue(ByteBuffer b, int valueAt, Head h, long handle, Locator where) {
        int actual = crc(b, valueAt, h.valueLength);
        if (actual != h.valueCrc) {
            throw where.corrupt(handle, "entry value CRC32C 0x" + Integer.toHexString(actual),
                    "0x" + Integer.toHexString(h.valueCrc));
        }
    }

    /** Checks {@code nextCheck} against {@code next} and the head CRC as stored in {@code b}. */
    static void checkNext(ByteBuffer b, long handle, Locator where) {
        long next = b.getLong(NEXT_OFFSET);
        int stored = b.getInt(NEXT_CHECK_OFFSET);
        int actual = Links.check(next, b.getInt(HEAD_CRC_OFFSET));
        if (stored != actual) {
            throw where.corrupt(handle, "a next link 0x" + Long.toHexString(next) + " with check 0x"
                    + Integer.toHexString(actual), "check 0x" + Integer.toHexString(stored));
        }
    }

    static byte[] key(ByteBuffer b, Head h) {
        byte[] k = new byte[h.keyLength];
        b.get(KEY_OFFSET, k);
        return k;
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
