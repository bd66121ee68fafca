package org.htod.table;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A bounded cache of entries' first bytes (what {@link HashtableOnDisk#load} reads: the fixed
 * fields and, for most entries, key and value; an entry read whole is kept whole up to {@link
 * #wholeLimit}), keyed by handle, shared by the tables of a store.
 * It saves the device read of an entry on a chain walk. Only bytes whose checksums matched enter
 * it, so a hit is used without checking them again.
 *
 * <p>It stays equal to the disk because every change to a cached block goes through it: an
 * entry's bytes never change except {@code next}, whose every write (a flush of {@link
 * SyncGate}, {@link HashtableOnDisk#writeNext}) replaces the cached copy under the view lock that
 * readers take; and a block is dropped from the cache before it is freed, so a handle reused for
 * a new block never finds old bytes. A link that waits in the gate is applied over the cached
 * copy by {@link HashtableOnDisk#load}.
 *
 * <h2>Concurrency</h2>
 *
 * A hit takes no lock and copies nothing: the cached arrays are never written after they are
 * published (a new {@code next} replaces the array), so {@link #get} hands out the array itself,
 * which the caller must only read. Lookups go to a {@link ConcurrentHashMap}; each of {@value
 * #PARTS} parts, chosen by the handle, has a lock that guards its byte count and its eviction
 * queue, taken by insertions, drops and evictions only. Eviction is CLOCK (second chance): a hit
 * marks its entry, and an insertion that overfills the part walks the queue from its oldest end,
 * giving a marked entry another round and dropping an unmarked one. Bounded by bytes.
 */
final class EntryCache {
    private static final int PARTS = 64;
    /** Bytes counted per cached block beyond its own: the node, the map entry, the key, the array header. */
    private static final int OVERHEAD = 96;
    private final ConcurrentHashMap<Long, Node> map = new ConcurrentHashMap<>();
    private final Part[] parts;
    private final boolean enabled;

    /** A cached block: its first bytes, replaced whole when its {@code next} changes. */
    private static final class Node {
        final long handle;
        final Part part;
        volatile byte[] bytes;
        /** Set by hits, cleared by the eviction walk; a racy hint, never a correctness matter. */
        boolean referenced;
        /**
         * Whether the map holds this node; guarded by {@link #part}'s monitor, under which every
         * insertion and removal happens. The eviction walk asks this instead of the map: a
         * lookup in a map of millions of nodes is a cache miss or two, for each node it meets.
         */
        boolean mapped = true;

        Node(long handle, Part part, byte[] bytes) {
            this.handle = handle;
            this.part = part;
            this.bytes = bytes;
        }
    }

    /** One part's eviction state; every field guarded by the part's monitor. */
    private static final class Part {
        final long budget;
        long bytes;
        final ArrayDeque<Node> queue = new ArrayDeque<>();
        /** Nodes in {@link #queue} no longer in the map (dropped), left there until a walk or a compaction meets them. */
        int stale;

        Part(long budget) {
            this.budget = budget;
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
        enabled = bytes / PARTS > 0;
    }

    /**
     * Largest block whose bytes are cached whole, not only their first page: a 64th of a part's
     * budget (a 4096th of the cache), so that one block never empties a part. Below a page for
     * caches under 16 MiB, where only first pages are kept.
     */
    int wholeLimit() {
        return (int) Math.min(Integer.MAX_VALUE, parts[0].budget / 64);
    }

    boolean enabled() {
        return enabled;
    }

    private Part part(long handle) {
        long h = handle * 0x9E3779B97F4A7C15L;
        return parts[(int) (h >>> 58)];
    }

    /**
     * The cached first bytes of {@code handle}, or null. The array is shared: the caller reads
     * it and never writes it.
     */
    byte[] get(long handle) {
        if (!enabled) {
            return null;
        }
        Node n = map.get(handle);
        if (n == null) {
            misses.increment();
            return null;
        }
        hits.increment();
        if (!n.referenced) {
            n.referenced = true;
        }
        return n.bytes;
    }

    /** Lookups that found the entry's bytes, and lookups that did not, since the store opened (0, 0 when disabled). */
    long[] counts() {
        return new long[] {hits.sum(), misses.sum()};
    }

    /** Caches {@code prefix}, which the cache owns from now on (the caller does not write it again). */
    void put(long handle, byte[] prefix) {
        if (!enabled) {
            return;
        }
        Part p = part(handle);
        synchronized (p) {
            Node n = new Node(handle, p, prefix);
            Node old = map.putIfAbsent(handle, n);
            if (old != null) {
                return; // another reader cached the same bytes first
            }
            p.queue.add(n);
            p.bytes += prefix.length + OVERHEAD;
            evict(p);
        }
    }

    /** Drops unmarked entries from the oldest end of {@code p}'s queue until it fits; the caller holds {@code p}. */
    private void evict(Part p) {
        int walk = 2 * p.queue.size();
        while (p.bytes > p.budget && walk-- > 0) {
            Node n = p.queue.poll();
            if (n == null) {
                return;
            }
            if (!n.mapped) {
                p.stale--;
                continue;
            }
            if (n.referenced) {
                n.referenced = false;
                p.queue.add(n);
            } else {
                map.remove(n.handle, n);
                n.mapped = false;
                p.bytes -= n.bytes.length + OVERHEAD;
            }
        }
    }

    /** The block's {@code next} field and its check were rewritten on disk. */
    void next(long handle, long next, int check) {
        if (!enabled) {
            return;
        }
        Node n = map.get(handle);
        if (n == null) {
            return;
        }
        synchronized (n.part) {
            if (n.mapped) {
                byte[] b = n.bytes.clone();
                ByteBuffer.wrap(b).putLong(Entries.NEXT_OFFSET, next).putInt(Entries.NEXT_CHECK_OFFSET, check);
                n.bytes = b;
            }
        }
    }

    /** The block is about to be freed. */
    void drop(long handle) {
        if (!enabled) {
            return;
        }
        Part p = part(handle);
        synchronized (p) {
            Node n = map.remove(handle);
            if (n == null) {
                return;
            }
            n.mapped = false;
            p.bytes -= n.bytes.length + OVERHEAD;
            if (++p.stale > 64 && p.stale > p.queue.size() / 2) {
                p.queue.removeIf(x -> !x.mapped);
                p.stale = 0;
            }
        }
    }

    /** Bytes of the blocks the map holds, overhead included, counted afresh (not by the parts): for tests. */
    long mappedBytes() {
        long b = 0;
        for (Node n : map.values()) {
            b += n.bytes.length + OVERHEAD;
        }
        return b;
    }

    /** Bytes held, overhead included: for tests. */
    long bytes() {
        long b = 0;
        for (Part p : parts) {
            synchronized (p) {
                b += p.bytes;
            }
        }
        return b;
    }
}
