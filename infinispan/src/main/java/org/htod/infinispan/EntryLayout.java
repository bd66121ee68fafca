package org.htod.infinispan;

import java.nio.ByteBuffer;
import org.infinispan.commons.io.ByteBufferFactory;
import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.persistence.spi.MarshallableEntryFactory;

/**
 * The bytes htod keeps as the value of one Infinispan entry; the htod key is the entry's key as
 * Infinispan's persistence marshaller writes it. Big-endian, version 1 (also in
 * {@code docs/INFINISPAN.md}):
 *
 * <pre>
 * offset size field
 *  0     1    layout version, 1
 *  1     8    created: epoch ms the entry was created, -1 if unknown
 *  9     8    last used: epoch ms of its last use, -1 if unknown
 * 17     8    expiry: epoch ms at which it dies (lifespan and max idle together), -1 never
 * 25     4    value length V, -1 for no value
 * 29     4    metadata length M, -1 for none
 * 33     4    internal metadata length I, -1 for none
 * 37     V    value bytes (user marshaller)
 * 37+V   M    metadata bytes (persistence marshaller)
 * ...    I    internal metadata bytes (persistence marshaller)
 * </pre>
 *
 * The expiry is stored apart from the metadata so that a read, an iteration or a purge judges it
 * without unmarshalling anything. There is no checksum here: htod checks a CRC32C over key and
 * value before it hands either out.
 */
final class EntryLayout {
    static final byte VERSION = 1;
    static final int VERSION_OFFSET = 0;
    static final int CREATED_OFFSET = 1;
    static final int LAST_USED_OFFSET = 9;
    static final int EXPIRY_OFFSET = 17;
    static final int VALUE_LENGTH_OFFSET = 25;
    static final int METADATA_LENGTH_OFFSET = 29;
    static final int INTERNAL_LENGTH_OFFSET = 33;
    static final int HEADER_SIZE = 37;

    private EntryLayout() {}

    /** The stored bytes of {@code e}. */
    static byte[] encode(MarshallableEntry<?, ?> e) {
        org.infinispan.commons.io.ByteBuffer value = e.getValueBytes();
        org.infinispan.commons.io.ByteBuffer meta = e.getMetadataBytes();
        org.infinispan.commons.io.ByteBuffer internal = e.getInternalMetadataBytes();
        long size = (long) HEADER_SIZE + length(value) + length(meta) + length(internal);
        if (size > Integer.MAX_VALUE) {
            throw new EntryFormatException("an entry of " + size + " bytes does not fit in one htod value");
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        b.put(VERSION).putLong(e.created()).putLong(e.lastUsed()).putLong(e.expiryTime());
        b.putInt(value == null ? -1 : value.getLength());
        b.putInt(meta == null ? -1 : meta.getLength());
        b.putInt(internal == null ? -1 : internal.getLength());
        put(b, value);
        put(b, meta);
        put(b, internal);
        return b.array();
    }

    private static int length(org.infinispan.commons.io.ByteBuffer b) {
        return b == null ? 0 : b.getLength();
    }

    private static void put(ByteBuffer out, org.infinispan.commons.io.ByteBuffer b) {
        if (b != null) {
            out.put(b.getBuf(), b.getOffset(), b.getLength());
        }
    }

    /** Epoch ms at which the entry stored as {@code stored} dies, -1 never. */
    static long expiry(byte[] stored) {
        checkHeader(stored);
        return ByteBuffer.wrap(stored).getLong(EXPIRY_OFFSET);
    }

    /** Whether the stored entry is dead at {@code now}, as Infinispan judges it: expiry reached. */
    static boolean expired(byte[] stored, long now) {
        long expiry = expiry(stored);
        return expiry > 0 && expiry <= now;
    }

    /**
     * The entry stored as {@code stored} under {@code key} (an object, or Infinispan's
     * {@code ByteBuffer} of its marshalled bytes). Nothing is unmarshalled here: the entry does it
     * when asked. Without {@code includeValue} the value is left out and the metadata kept.
     */
    static <K, V> MarshallableEntry<K, V> decode(Object key, byte[] stored, boolean includeValue,
            MarshallableEntryFactory<K, V> entries, ByteBufferFactory buffers) {
        checkHeader(stored);
        ByteBuffer b = ByteBuffer.wrap(stored);
        long created = b.getLong(CREATED_OFFSET);
        long lastUsed = b.getLong(LAST_USED_OFFSET);
        int valueLength = b.getInt(VALUE_LENGTH_OFFSET);
        int metaLength = b.getInt(METADATA_LENGTH_OFFSET);
        int internalLength = b.getInt(INTERNAL_LENGTH_OFFSET);
        long end = (long) HEADER_SIZE + Math.max(0, valueLength) + Math.max(0, metaLength) + Math.max(0, internalLength);
        if (valueLength < -1 || metaLength < -1 || internalLength < -1 || end != stored.length) {
            throw new EntryFormatException("an entry of " + stored.length + " bytes declares value, metadata and internal "
                    + "metadata lengths " + valueLength + ", " + metaLength + " and " + internalLength
                    + " (expected -1 or more each, adding up with the " + HEADER_SIZE + "-byte header to its size)");
        }
        int at = HEADER_SIZE;
        org.infinispan.commons.io.ByteBuffer value = includeValue ? slice(buffers, stored, at, valueLength) : null;
        at += Math.max(0, valueLength);
        org.infinispan.commons.io.ByteBuffer meta = slice(buffers, stored, at, metaLength);
        at += Math.max(0, metaLength);
        org.infinispan.commons.io.ByteBuffer internal = slice(buffers, stored, at, internalLength);
        if (key instanceof org.infinispan.commons.io.ByteBuffer) {
            return entries.create((org.infinispan.commons.io.ByteBuffer) key, value, meta, internal, created, lastUsed);
        }
        return entries.create(key, value, meta, internal, created, lastUsed);
    }

    private static org.infinispan.commons.io.ByteBuffer slice(ByteBufferFactory buffers, byte[] stored, int at, int length) {
        return length < 0 ? null : buffers.newByteBuffer(stored, at, length);
    }

    private static void checkHeader(byte[] stored) {
        if (stored.length < HEADER_SIZE) {
            throw new EntryFormatException("an entry of " + stored.length + " bytes is shorter than the " + HEADER_SIZE
                    + "-byte header of layout version " + VERSION);
        }
        if (stored[VERSION_OFFSET] != VERSION) {
            throw new EntryFormatException("expected entry layout version " + VERSION + " at byte " + VERSION_OFFSET
                    + ", found " + stored[VERSION_OFFSET]);
        }
    }
}
