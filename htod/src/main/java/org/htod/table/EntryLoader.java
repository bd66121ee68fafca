package org.htod.table;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.htod.core.CorruptStoreException;
import org.htod.core.alloc.Heap;

/**
 * How a table reads its entries: from the entry cache, or from the device and checked before
 * anything in them is used (head CRC, {@code next}, value CRC, table id, lengths), with the links
 * waiting in the {@link SyncGate} laid over what the disk holds. Damage is reported as a {@link
 * CorruptStoreException} naming the table and the block's offset. Holds no lock: the caller holds
 * the entry's stripe view lock, or writer lock, as {@link HashtableOnDisk} says.
 */
final class EntryLoader {
    private final Heap heap;
    private final SyncGate gate;
    private final long tableId;
    private final String name;

    EntryLoader(Heap heap, SyncGate gate, long tableId, String name) {
        this.heap = heap;
        this.gate = gate;
        this.tableId = tableId;
        this.name = name;
    }

    CorruptStoreException corrupt(long handle, String expected, String found) {
        long at = heap.address(handle);
        return new CorruptStoreException("table '" + name + "': expected " + expected + " in the block at offset " + at
                + " of " + heap.device().name() + ", found " + found, at);
    }

    /**
     * A link is followed only if it names a block that can be an entry of this heap. Whether the
     * block lies within the device is not asked here (that is a system call, and on a {@code
     * FileChannel} a lock every reader would share): a read past the end fails, and {@link
     * #read} turns that into the same report.
     */
    void checkLink(long handle) {
        long at = heap.address(handle);
        long size = heap.blockSize(handle);
        if (at < heap.firstBlock() || size < HashtableOnDisk.BLOCK_HEADER + Entries.OVERHEAD) {
            throw noEntry(handle);
        }
    }

    private CorruptStoreException noEntry(long handle) {
        long at = heap.address(handle);
        return new CorruptStoreException("table '" + name + "': a chain link holds 0x" + Long.toHexString(handle)
                + ", which names no possible entry block (offset " + at + ", " + heap.blockSize(handle) + " bytes) in "
                + heap.device().name(), at);
    }

    /** Reads payload bytes of an entry; a block running past the end of the device is damage, reported as such. */
    private void read(long handle, long offset, ByteBuffer dst) {
        try {
            heap.readAt(handle, offset, dst);
        } catch (org.htod.core.HtodIOException e) {
            if (heap.address(handle) + heap.blockSize(handle) > heap.device().size()) {
                CorruptStoreException c = noEntry(handle);
                c.addSuppressed(e);
                throw c;
            }
            throw e;
        }
    }

    /**
     * An entry as read and checked: its fixed fields (with {@code next} as readers must see it:
     * a waiting link wins over the disk), and bytes holding its fields and key, and its value too
     * when the entry is small or was read whole. Nothing in it is used before its checksum matched.
     * The bytes may be the entry cache's own array: they are only read.
     */
    static final class Loaded {
        final long handle;
        final Entries.Head h;
        final ByteBuffer bytes;
        /** Whether the entry cache held the bytes, so that no device read was made. */
        final boolean cached;

        Loaded(long handle, Entries.Head h, ByteBuffer bytes, boolean cached) {
            this.handle = handle;
            this.h = h;
            this.bytes = bytes;
            this.cached = cached;
        }

        /** The head CRC: the salt of this entry's {@code next} link. */
        int salt() {
            return bytes.getInt(Entries.HEAD_CRC_OFFSET);
        }

        byte[] key() {
            return Entries.key(bytes, h);
        }

        boolean keyEquals(byte[] key) {
            return Entries.keyEquals(bytes, h, key);
        }
    }

    /** Largest entry payload a lookup that wants the value reads whole, in one device read, on a miss. */
    static final int WHOLE_READ = 256 * 1024;

    /**
     * Bytes read first, on a miss, of an entry whose block holds more than a page when its value
     * is not wanted (a chain walk past it, a put that needs its version only): the fixed fields
     * and a key of up to 448 bytes, so that a put replacing a 4,000-byte value neither copies,
     * checks nor caches the value it replaces. A longer key is read whole by a second read.
     */
    static final int HEAD_READ = 512;

    /** {@link #load(long, boolean)} reading the first bytes only. */
    Loaded load(long handle) {
        return load(handle, false);
    }

    /**
     * Reads an entry's first bytes (from the cache, or one device read: the block whole when it
     * holds at most a page, else its first {@link #HEAD_READ} bytes; with {@code whole}, the whole
     * entry in that one read when it is at most {@link #WHOLE_READ} bytes) and checks what they
     * hold before anything is used: the head CRC over fields and key (reading the rest of a long
     * key first), the check of {@code next}, the value CRC when the value is there too. Only
     * checked bytes enter the cache, so a hit is not checked again: a cache hit costs no device
     * read and no checksum.
     */
    Loaded load(long handle, boolean whole) {
        checkLink(handle);
        long payload = heap.blockSize(handle) - HashtableOnDisk.BLOCK_HEADER;
        byte[] cached = gate.cache.get(handle);
        ByteBuffer b;
        Entries.Head h;
        if (cached != null) {
            b = ByteBuffer.wrap(cached);
            h = Entries.headChecked(b);
        } else {
            int first = (int) Math.min(payload, whole && payload <= WHOLE_READ ? payload
                    : payload <= Entries.PREFIX ? payload : HEAD_READ);
            b = ByteBuffer.allocate(first);
            read(handle, 0, b);
            b.clear();
            int k = Entries.rawKeyLength(b);
            if (k > 0 && Entries.KEY_OFFSET + (long) k > b.capacity() && Entries.KEY_OFFSET + (long) k <= payload
                    && k <= Entries.MAX_KEY) {
                b = ByteBuffer.allocate(Entries.KEY_OFFSET + k); // a long key: read fields and key whole
                read(handle, 0, b);
                b.clear();
            } else if (Entries.KEY_OFFSET + (long) k > b.capacity()) {
                throw corrupt(handle, "an entry whose key fits its block of " + heap.blockSize(handle) + " bytes",
                        "key length " + k);
            }
            h = Entries.head(b, handle, this::corrupt);
            Entries.checkNext(b, handle, this::corrupt);
            if (h.length() <= b.capacity()) {
                Entries.checkValue(b, Entries.KEY_OFFSET + h.keyLength, h, handle, this::corrupt);
            }
            if (b.capacity() <= Entries.PREFIX || (b.capacity() <= gate.cache.wholeLimit() && h.length() <= b.capacity())) {
                // a first page, or an entry read whole, its value checked above, small enough to
                // keep whole: a hit then reads nothing and checks nothing
                gate.cache.put(handle, b.array());
            } else if (Entries.KEY_OFFSET + h.keyLength <= Entries.PREFIX) {
                // read whole: the cache keeps the first page, fields and key checked above
                gate.cache.put(handle, Arrays.copyOf(b.array(), Entries.PREFIX));
            }
        }
        h.next = gate.linkAt(handle, Entries.NEXT_OFFSET, h.next);
        if (h.tableId != tableId) {
            throw corrupt(handle, "an entry of table id 0x" + Long.toHexString(tableId),
                    "table id 0x" + Long.toHexString(h.tableId));
        }
        if (h.length() > payload) {
            throw corrupt(handle, "an entry that fits its block of " + heap.blockSize(handle) + " bytes",
                    "key and value lengths totalling " + h.length() + " bytes");
        }
        return new Loaded(handle, h, b, cached != null);
    }

    /**
     * The value of a loaded entry: from its bytes when they hold it, else what they hold of it and
     * the rest by one more read, checked whole.
     */
    byte[] value(Loaded e) {
        return value(e, false);
    }

    /**
     * {@link #value(Loaded)}; with {@code keep}, an entry read whole here (its first bytes were
     * cached, or read, without the rest) that the cache may keep whole is put in the cache whole,
     * so that later gets of it read and check nothing. Only callers holding the entry's stripe
     * view lock keep (see {@link EntryCache#put}).
     */
    private byte[] value(Loaded e, boolean keep) {
        Entries.Head h = e.h;
        int at = Entries.KEY_OFFSET + h.keyLength;
        if (h.length() <= e.bytes.capacity()) {
            // one copy straight from the array: the JIT then allocates the result without first
            // zeroing it (a get of a cached 15 KiB value spent a tenth of its time in that memset)
            return Arrays.copyOfRange(e.bytes.array(), at, at + h.valueLength);
        }
        int held = Math.max(0, e.bytes.capacity() - at);
        if (keep && h.length() <= gate.cache.wholeLimit()) {
            byte[] whole = new byte[h.length()];
            e.bytes.get(0, whole, 0, at + held);
            ByteBuffer rest = ByteBuffer.wrap(whole, at + held, h.valueLength - held);
            read(e.handle, at + held, rest);
            Entries.checkValue(ByteBuffer.wrap(whole), at, h, e.handle, this::corrupt);
            gate.cache.put(e.handle, whole);
            return Arrays.copyOfRange(whole, at, whole.length);
        }
        byte[] v = new byte[h.valueLength];
        e.bytes.get(at, v, 0, held);
        ByteBuffer b = ByteBuffer.wrap(v, held, v.length - held);
        read(e.handle, at + held, b);
        b.clear();
        Entries.checkValue(b, 0, h, e.handle, this::corrupt);
        return v;
    }

    /** The entry's fields, key and (with {@code withValue}) value; the caller holds its stripe's view lock. */
    StoredEntry decode(Loaded e, boolean withValue) {
        Entries.Head h = e.h;
        return new StoredEntry(e.handle, h.next, h.hash, h.version, h.expiry, e.key(), withValue ? value(e, true) : null);
    }

    /**
     * Checks that an entry reached from bucket {@code bucket} of {@code a} hashes there: a link
     * that checks but leads into another chain is damage, never a shorter answer.
     */
    void checkBucket(Loaded e, BucketArray a, long bucket) {
        if ((e.h.hash & a.mask()) != bucket) {
            throw corrupt(e.handle, "an entry hashing to bucket " + bucket + " of " + a.bucketCount,
                    "hash 0x" + Long.toHexString(e.h.hash) + ", bucket " + (e.h.hash & a.mask()));
        }
    }
}
