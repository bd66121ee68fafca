package org.htod.table;

import java.nio.ByteBuffer;
import org.htod.core.CorruptStoreException;
import org.htod.core.alloc.Heap;

/**
 * Entries that a writer places in the heap itself, before its change is logged (the write layer's
 * placed values): written whole, in the {@link Entries} format, with no successor yet ({@code
 * next} 0); the install links them into their chains, setting {@code next} as a link write. The
 * log record names the block and the entry's head CRC, which covers every field (the value's CRC
 * among them) and the key, so that recovery can tell whether a block holds exactly the entry its
 * record names.
 */
public final class PlacedEntries {
    private PlacedEntries() {}

    /** The payload of a new entry of {@code key} in table {@code t}, to be placed by its writer. */
    public static ByteBuffer encode(HashtableOnDisk t, long version, long expiry, byte[] key, byte[] value) {
        HashtableOnDisk.checkSizes(key, value);
        return Entries.encode(0, t.tableId, t.hash(key), version, expiry, key, value);
    }

    /** The head CRC of an entry {@link #encode} made. */
    public static int headCrc(ByteBuffer entry) {
        return entry.getInt(Entries.HEAD_CRC_OFFSET);
    }

    /**
     * The value of the entry in block {@code handle}, if the block holds exactly the entry a
     * record names (its head CRC, table, key, version, expiry and value length, the key's hash by
     * {@code hashing}, the table's function, and a value whose CRC matches); else null: the block was never written whole (a write that a crash cut off
     * before its sync) or holds something else.
     *
     * @throws org.htod.core.HtodIOException if the device fails
     */
    public static byte[] valueIfIntact(Heap heap, long handle, long tableId, TableHash hashing, byte[] key, long version,
            long expiry, int headCrc, int valueLength) {
        if (heap.address(handle) + heap.blockSize(handle) > heap.device().size()) {
            return null; // the block's write never reached a device that grows with its writes
        }
        ByteBuffer b;
        try {
            b = heap.read(handle);
        } catch (CorruptStoreException e) {
            return null; // no allocated block header of that size there
        }
        Entries.Locator quiet = (h, expected, found) -> new CorruptStoreException(expected, -1);
        Entries.Head h;
        try {
            if (b.limit() < Entries.KEY_OFFSET || b.getInt(Entries.HEAD_CRC_OFFSET) != headCrc) {
                return null;
            }
            h = Entries.head(b, handle, quiet);
        } catch (CorruptStoreException e) {
            return null;
        }
        if (h.tableId != tableId || h.version != version || h.expiry != expiry || h.valueLength != valueLength
                || h.hash != hashing.hash(key) || !Entries.keyEquals(b, h, key)
                || b.limit() < Entries.KEY_OFFSET + h.keyLength + h.valueLength) {
            return null;
        }
        int valueAt = Entries.KEY_OFFSET + h.keyLength;
        if (Entries.crc(b, valueAt, h.valueLength) != h.valueCrc) {
            return null;
        }
        byte[] v = new byte[h.valueLength];
        b.get(valueAt, v);
        return v;
    }
}
