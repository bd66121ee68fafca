package org.htod.table;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;
import org.htod.core.IncompatibleFormatException;
import org.htod.core.alloc.Heap;

/**
 * The table header: where a table's bucket array is and how far a doubling has got. One heap
 * block of two 128-byte slots; each update writes the whole state to the slot not holding the
 * current one, so that a torn write leaves the previous state intact in the other slot. The valid
 * slot with the higher sequence is current. Odd sequences go to slot A (payload offset 0), even
 * ones to slot B (payload offset 128).
 *
 * <p>The format version names the table's hash function ({@link TableHash}): 1, fixed-seed
 * MurmurHash64A, whose hash key bytes are reserved (0) and not read; 2, SipHash-2-4 under the
 * 128-bit key the slot holds. Both slots carry the same; the CRC covers the key.
 *
 * <pre>
 *   0  8  magic          "HTODTABL"
 *   8  4  formatVersion  1 or 2: the table's hash function (see above)
 *  12  4  reserved       0
 *  16  8  sequence       number of this header write, from 1
 *  24  8  tableId        random, non-zero; every entry of the table carries it
 *  32  8  array          directory handle of the bucket array in use (while doubling: the old one)
 *  40  8  entryCount     entries at the last sync or clean close; trusted only after a clean close
 *  48  4  loadPermille   doubling starts when entries * 1000 > buckets * loadPermille
 *  52  4  reserved       0
 *  56  8  newArray       doubling: directory handle of the array twice the size; 0 when not doubling
 *  64  8  moved          doubling: old buckets [0, moved) have been moved to the new array
 *  72  8  unzipFrom      doubling: old buckets [unzipFrom, moved) were moved by the last batch, whose
 *                        in-place relinking may have been cut by a crash (recovery redoes it)
 *  80  8  hashKey0       version 2: k0 of the SipHash key (0 in version 1)
 *  88  8  hashKey1       version 2: k1 of the SipHash key (0 in version 1)
 *  96 28  reserved       0
 * 124  4  crc32c         CRC32C of bytes 0..123 of the slot
 * </pre>
 */
final class TableHeader {
    static final long MAGIC = 0x48544f445441424cL; // "HTODTABL"
    /** The format versions read: 1, fixed-seed tables, and 2, keyed ones (see {@link TableHash}). */
    static final int OLDEST_VERSION = 1;
    static final int NEWEST_VERSION = 2;
    static final int SLOT_SIZE = 128;
    static final int PAYLOAD_SIZE = 2 * SLOT_SIZE;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 8;
    static final int SEQUENCE_OFFSET = 16;
    static final int TABLE_ID_OFFSET = 24;
    static final int ARRAY_OFFSET = 32;
    static final int ENTRY_COUNT_OFFSET = 40;
    static final int LOAD_OFFSET = 48;
    static final int NEW_ARRAY_OFFSET = 56;
    static final int MOVED_OFFSET = 64;
    static final int UNZIP_FROM_OFFSET = 72;
    static final int HASH_KEY0_OFFSET = 80;
    static final int HASH_KEY1_OFFSET = 88;
    static final int CRC_OFFSET = 124;

    /** The state one slot holds. */
    record State(long sequence, long tableId, long array, long entryCount, int loadPermille, long newArray,
            long moved, long unzipFrom, TableHash hash) {

        boolean doubling() {
            return newArray != 0;
        }
    }

    private TableHeader() {}

    static ByteBuffer encodeSlot(State s) {
        ByteBuffer b = ByteBuffer.allocate(SLOT_SIZE);
        b.putLong(MAGIC_OFFSET, MAGIC);
        b.putInt(VERSION_OFFSET, s.hash.formatVersion);
        b.putLong(SEQUENCE_OFFSET, s.sequence);
        b.putLong(TABLE_ID_OFFSET, s.tableId);
        b.putLong(ARRAY_OFFSET, s.array);
        b.putLong(ENTRY_COUNT_OFFSET, s.entryCount);
        b.putInt(LOAD_OFFSET, s.loadPermille);
        b.putLong(NEW_ARRAY_OFFSET, s.newArray);
        b.putLong(MOVED_OFFSET, s.moved);
        b.putLong(UNZIP_FROM_OFFSET, s.unzipFrom);
        b.putLong(HASH_KEY0_OFFSET, s.hash.k0);
        b.putLong(HASH_KEY1_OFFSET, s.hash.k1);
        b.putInt(CRC_OFFSET, crc(b, 0));
        return b;
    }

    private static int crc(ByteBuffer b, int at) {
        CRC32C c = new CRC32C();
        ByteBuffer d = b.duplicate();
        d.position(at).limit(at + CRC_OFFSET);
        c.update(d);
        return (int) c.getValue();
    }

    /** Allocates a header block holding {@code s} (with sequence 1) in slot A; slot B is zeros. */
    static long create(Heap heap, State s) {
        ByteBuffer b = ByteBuffer.allocate(PAYLOAD_SIZE);
        b.put(0, encodeSlot(s), 0, SLOT_SIZE);
        return heap.allocate(b);
    }

    /** Writes {@code s} to the slot its sequence selects: one write of 128 bytes. */
    static void write(Heap heap, long handle, State s) {
        heap.writeAt(handle, s.sequence % 2 == 1 ? 0 : SLOT_SIZE, encodeSlot(s));
    }

    /**
     * Reads both slots and returns the current state: the valid slot with the higher sequence. A
     * slot that is neither valid nor all zeros (never written) is damaged. After an unclean
     * shutdown that may be a header write the crash tore, and the other slot, the state before
     * it, is current; with {@code strict} (the store was closed cleanly, so no write was in
     * flight) it is damage that may have hit the newer state, and is reported.
     */
    static State read(Heap heap, long handle, boolean strict) {
        ByteBuffer b = heap.read(handle);
        long at = heap.address(handle);
        String dev = heap.device().name();
        if (b.remaining() < PAYLOAD_SIZE) {
            throw new CorruptStoreException("expected a table header of " + PAYLOAD_SIZE + " bytes in the block at offset "
                    + at + " of " + dev + ", found " + b.remaining() + " bytes", at);
        }
        State a = slot(b, 0, dev);
        State c = slot(b, SLOT_SIZE, dev);
        for (int i = 0; i < 2 && strict; i++) {
            int off = i * SLOT_SIZE;
            if ((i == 0 ? a : c) == null && !zeros(b, off)) {
                long where = at + HashtableOnDisk.BLOCK_HEADER + off;
                throw new CorruptStoreException("table header slot " + (i == 0 ? "A" : "B") + " at offset " + where + " of "
                        + dev + " is damaged in a store closed cleanly: expected magic HTODTABL, a matching CRC32C and a"
                        + " sequence of its parity, or a slot never written (zeros)", where);
            }
        }
        if (a != null && c != null && !a.hash.equals(c.hash)) {
            // A table's function never changes: two slots that disagree were not both written
            // by it, and whichever was taken would misplace every key.
            throw new CorruptStoreException("table header at offset " + at + " of " + dev + ": expected slots A and B"
                    + " of one hash function, found " + a.hash + " and " + c.hash + (a.hash.formatVersion
                    == c.hash.formatVersion ? " under different keys" : ""), at);
        }
        State best = a == null ? c : c == null ? a : a.sequence >= c.sequence ? a : c;
        if (best == null) {
            throw new CorruptStoreException("no valid table header slot in the block at offset " + at + " of " + dev
                    + ": expected magic HTODTABL and a matching CRC32C in slot A or B", at);
        }
        return best;
    }

    private static boolean zeros(ByteBuffer b, int at) {
        for (int i = 0; i < SLOT_SIZE; i++) {
            if (b.get(at + i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static State slot(ByteBuffer b, int at, String dev) {
        if (b.getLong(at + MAGIC_OFFSET) != MAGIC || b.getInt(at + CRC_OFFSET) != crc(b, at)) {
            return null;
        }
        int version = b.getInt(at + VERSION_OFFSET);
        if (version < OLDEST_VERSION || version > NEWEST_VERSION) {
            throw new IncompatibleFormatException("table header of " + dev, version, OLDEST_VERSION, NEWEST_VERSION);
        }
        long seq = b.getLong(at + SEQUENCE_OFFSET);
        if (seq < 1 || (seq % 2 == 1) != (at == 0)) {
            return null;
        }
        return new State(seq, b.getLong(at + TABLE_ID_OFFSET), b.getLong(at + ARRAY_OFFSET),
                b.getLong(at + ENTRY_COUNT_OFFSET), b.getInt(at + LOAD_OFFSET), b.getLong(at + NEW_ARRAY_OFFSET),
                b.getLong(at + MOVED_OFFSET), b.getLong(at + UNZIP_FROM_OFFSET), version == 1 ? TableHash.FIXED_SEED
                        : TableHash.keyed(b.getLong(at + HASH_KEY0_OFFSET), b.getLong(at + HASH_KEY1_OFFSET)));
    }
}
