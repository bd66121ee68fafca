package org.htod.table;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * A bounded cache of entries' first bytes (what {@link HashtableOnDisk#prefix} reads: the fixed
 * fields and, for most entries, key and value), keyed by handle, shared by the tables of a store.
 * It saves the device read of an entry on a chain walk.
 *
 * <p>It stays equal to the disk because every change to a cached block goes through it: an
 * entry's bytes never change except {@code next}, whose every write (a flush of {@link
 * SyncGate}, {@link HashtableOnDisk#writeNext}) updates the cached copy under the view lock that
 * readers take; and a block is dropped from the cache before it is freed, so a handle reused for
 * a new block never finds old bytes. A link that waits in the gate is applied over the cached
 * copy by {@link HashtableOnDisk#head}. Bounded by bytes, least recently used
 * first out, in 16 independently locked parts.
 */
final class EntryCache {
    private static final int PARTS = 16;
    /** Bytes counted per cached block beyond its own: the map entry, the key, the array header. */
    private static final int OVERHEAD = 64;
    private final Part[] parts;

    private static final class Part extends LinkedHashMap<Long, byte[]> {
        private static final long serialVersionUID = 1L;
        private final long budget;
        private long bytes;

        Part(long budget) {
            super(64, 0.75f, true);
            this.budget = budget;
        }

        void evict() {
            java.util.Iterator<Map.Entry<Long, byte[]>> it = entrySet().iterator();
            while (bytes > budget && it.hasNext()) {
                bytes -= it.next().getValue().length + OVERHEAD;
                it.remove();
            }
        }
    }

    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();

    /** A cache of about {@code bytes} bytes; 0 disables it. */
    EntryCache(long bytes) {
        parts = new Part[PARTS];
        for (int i = 0; i < PARTS; i++) {
            parts[i] = new Part(bytes / PARTS);
        }
    }

    boolean enabled() {
        return parts[0].budget > 0;
    }

    private Part part(long handle) {
        long h = handle * 0x9E3779B97F4A7C15L;
        return parts[(int) (h >>> 60)];
    }

    /** A copy of the cached first bytes of {@code handle}, or null. */
    byte[] get(long handle) {
        if (!enabled()) {
            return null;
        }
        Part p = part(handle);
        byte[] b;
        synchronized (p) {
            b = p.get(handle);
            b = b == null ? null : b.clone();
        }
        (b == null ? misses : hits).increment();
        return b;
    }

    /** Lookups that found the entry's bytes, and lookups that did not, since the store opened (0, 0 when disabled). */
    long[] counts() {
        return new long[] {hits.sum(), misses.sum()};
    }

    void put(long handle, byte[] prefix) {
        if (!enabled()) {
            return;
        }
        Part p = part(handle);
        synchronized (p) {
            byte[] old = p.put(handle, prefix.clone());
            p.bytes += prefix.length + OVERHEAD - (old == null ? 0 : old.length + OVERHEAD);
            p.evict();
        }
    }

    /** The block's {@code next} field and its check were rewritten on disk. */
    void next(long handle, long next, int check) {
        if (!enabled()) {
            return;
        }
        Part p = part(handle);
        synchronized (p) {
            byte[] b = p.get(handle);
            if (b != null) {
                java.nio.ByteBuffer.wrap(b).putLong(Entries.NEXT_OFFSET, next).putInt(Entries.NEXT_CHECK_OFFSET, check);
            }
        }
    }

    /** The block is about to be freed. */
    void drop(long handle) {
        if (!enabled()) {
            return;
        }
        Part p = part(handle);
        synchronized (p) {
            byte[] old = p.remove(handle);
            if (old != null) {
                p.bytes -= old.length + OVERHEAD;
            }
        }
    }
}
