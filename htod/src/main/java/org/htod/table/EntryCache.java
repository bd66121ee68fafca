package org.htod.table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A bounded cache of entries' first bytes (what {@link EntryLoader#load} reads: the fixed
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
 * copy by {@link EntryLoader#load}.
 *
 * <h2>Concurrency</h2>
 *
 * A hit takes no lock and copies nothing: the cached arrays are never written after they are
 * published (a new {@code next} replaces the array), so {@link #get} hands out the array itself,
 * which the caller must only read. Each of {@value #PARTS} parts, chosen by the handle, has a lock
 * (its monitor) that guards its byte count, its eviction queue and every write to its index,
 * taken by insertions, drops and evictions only. Eviction is CLOCK (second chance): a hit marks
 * its entry, and an insertion that overfills the cache walks its part's queue from its oldest end,
 * giving a marked entry another round and dropping an unmarked one. Bounded by bytes: the cache's
 * budget, what the slots beside it leave, plus at most an eighth (see {@link #evict}).
 *
 * <h2>The index</h2>
 *
 * Each part finds its nodes through an open-addressing index (linear probing, at most half full)
 * of two arrays, the slots' handles and their nodes, read without a lock. A lookup compares
 * handles in one array, where consecutive probes share a cache line, and touches one node, the
 * one it finds; a {@code ConcurrentHashMap<Long, Node>} cost its bin, its own node and a boxed key
 * as well, each a cache miss once the nodes outnumber the processor's caches, and two objects
 * allocated per insertion (gets at a million entries: docs/READ-PATH.md). Writers (under the
 * part's lock) publish slots with release stores and readers load them with acquire loads, and a
 * reader compares the node's handle with its own, so a lookup never returns another handle's
 * node. A removal closes its gap by moving later slots of the probe run back (no tombstones); a
 * reader racing with that, or with a resize (which publishes the new index, then empties the old
 * one), may miss a node that is there: a false miss, which costs a device read and nothing else.
 * It can never find a node that a removal finished taking out: a node sits in one slot until a
 * removal overwrites it there, and a resize empties the old index before it lets the lock go.
 * Handle 0 marks an empty slot; no block has it (a handle holds its block's size, never 0).
 */
final class EntryCache {
    private static final int PARTS = 64;
    /** Bytes counted per cached block beyond its own: the node, its index slots, the queue's reference, the array header. */
    private static final int OVERHEAD = 96;
    /** Slots of a part's index when it is created, and the least it shrinks to. */
    private static final int MIN_SLOTS = 16;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Node[].class);
    private static final VarHandle HANDLE = MethodHandles.arrayElementVarHandle(long[].class);
    private final Part[] parts;
    private final boolean enabled;
    /** Bytes of the cache and of the slots beside it: the entry cache holds what the slots leave. */
    private final long total;
    private final SlotCache slots;
    /** Largest block kept whole; see {@link #wholeLimit}. */
    private final int wholeLimit;

    /** A cached block: its first bytes, replaced whole when its {@code next} changes. */
    private static final class Node {
        final long handle;
        volatile byte[] bytes;
        /** Set by hits, cleared by the eviction walk; a racy hint, never a correctness matter. */
        boolean referenced;
        /**
         * Whether its part's index holds this node; guarded by that part's monitor, under which
         * every insertion and removal happens. The eviction walk asks this instead of the index.
         */
        boolean mapped = true;

        Node(long handle, byte[] bytes) {
            this.handle = handle;
            this.bytes = bytes;
        }
    }

    /**
     * A part's index: the handles of its slots (0: empty), which a lookup and a gap's closing
     * compare and rehash without touching the nodes, and the node of each. Two arrays, not nodes
     * alone: each node compared was a cache miss of its own, and closing a removal's gap read
     * every node after it in its probe run (at 64 writers of 200-byte values the flusher spent
     * about 8% of its processor time in those reads, its drops and chain walks). Replaced whole by
     * a resize.
     */
    private static final class Index {
        final long[] handles;
        final Node[] nodes;

        Index(int slots) {
            handles = new long[slots];
            nodes = new Node[slots];
        }
    }

    /**
     * One part: its index and its eviction state. Every field is guarded by the part's monitor,
     * but {@link #index}, which readers also load (see the class comment).
     */
    private static final class Part {
        long bytes;
        final ArrayDeque<Node> queue = new ArrayDeque<>();
        /** Nodes in {@link #queue} no longer in the index (dropped), left there until a walk or a compaction meets them. */
        int stale;
        /** The index: linear probing, at most half full; replaced whole by a resize. */
        volatile Index index = new Index(MIN_SLOTS);
        /** Nodes in {@link #index}. */
        int count;

        /** The node of {@code handle}, or null; no lock. May miss a node being moved (see the class comment). */
        Node find(long handle) {
            return find(index, handle);
        }

        /**
         * {@link #find(long)} in {@code x}, which may be an index a resize has replaced since it
         * was loaded. A slot's node is written before its handle, and a handle found is checked
         * against its node's own: a node moved meanwhile is a false miss, never another's node.
         */
        static Node find(Index x, long handle) {
            long[] h = x.handles;
            int mask = h.length - 1;
            int i = slot(handle, mask);
            for (int probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
                long at = (long) HANDLE.getAcquire(h, i);
                if (at == 0) {
                    return null;
                }
                if (at == handle) {
                    Node n = (Node) SLOT.getAcquire(x.nodes, i);
                    return n != null && n.handle == handle ? n : null;
                }
            }
            return null;
        }

        /** Adds {@code n}, whose handle is not in the index; the caller holds the monitor. */
        void insert(Node n) {
            if (2 * (count + 1) > index.handles.length) {
                resize(index.handles.length * 2);
            }
            place(index, n);
            count++;
        }

        /** Takes out the node of {@code handle}, if the index holds one, closing the gap; returns it. The caller holds the monitor. */
        Node remove(long handle) {
            Index x = index;
            long[] h = x.handles;
            int mask = h.length - 1;
            int i = slot(handle, mask);
            for (int probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
                long at = h[i];
                if (at == 0) {
                    return null;
                }
                if (at == handle) {
                    Node n = x.nodes[i];
                    closeGap(x, i);
                    count--;
                    if (count * 8 < h.length && h.length > MIN_SLOTS) {
                        resize(h.length / 2);
                    }
                    return n;
                }
            }
            return null;
        }

        /**
         * Empties slot {@code gap} of {@code x}: each later node of the probe run whose home slot
         * is not between the gap and itself (cyclically) moves into the gap, which moves to where
         * it was; the last gap is emptied. A moved node is in its new slot before its old one is
         * written, so it is never absent from both; in a slot, the node is written before the
         * handle when one arrives, and after it when the slot empties.
         */
        private static void closeGap(Index x, int gap) {
            long[] h = x.handles;
            int mask = h.length - 1;
            int j = gap;
            while (true) {
                j = (j + 1) & mask;
                long at = h[j];
                if (at == 0) {
                    break;
                }
                int home = slot(at, mask);
                boolean stays = gap <= j ? gap < home && home <= j : gap < home || home <= j;
                if (!stays) {
                    SLOT.setRelease(x.nodes, gap, x.nodes[j]);
                    HANDLE.setRelease(h, gap, at);
                    gap = j;
                }
            }
            HANDLE.setRelease(h, gap, 0L);
            SLOT.setRelease(x.nodes, gap, (Node) null);
        }

        /** An index of {@code slots} holding every node, published; then the old one emptied (see the class comment). */
        private void resize(int slots) {
            Index old = index;
            Index x = new Index(Math.max(MIN_SLOTS, slots));
            for (Node n : old.nodes) {
                if (n != null) {
                    place(x, n);
                }
            }
            index = x;
            for (int i = 0; i < old.handles.length; i++) {
                HANDLE.setRelease(old.handles, i, 0L);
                SLOT.setRelease(old.nodes, i, (Node) null);
            }
        }

        private static void place(Index x, Node n) {
            long[] h = x.handles;
            int mask = h.length - 1;
            int i = slot(n.handle, mask);
            while (h[i] != 0) {
                i = (i + 1) & mask;
            }
            SLOT.setRelease(x.nodes, i, n);
            HANDLE.setRelease(h, i, n.handle);
        }
    }

    /**
     * A handle's home slot in a part's index of {@code mask + 1} slots: bits of the handle's mixed
     * hash below the six that chose the part, so that a part's handles spread over its slots.
     */
    private static int slot(long handle, int mask) {
        return (int) ((handle * 0x9E3779B97F4A7C15L) >>> 26) & mask;
    }

    /** Bytes of all parts, overhead included; changed under a part's monitor, read without. */
    private final AtomicLong held = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();

    /** A cache of about {@code bytes} bytes with no slots beside it; 0 disables it. */
    EntryCache(long bytes) {
        this(bytes, new SlotCache(0));
    }

    /**
     * A cache that shares {@code total} bytes with {@code slots}: it holds {@code total} less the
     * bytes the slots hold now, so that the slots' share (at most their budget, a quarter of the
     * store's cache) is not left empty when the tables have few buckets. When the slots grow, the
     * parts give the bytes back at their next insertions (see {@link #evict}).
     */
    EntryCache(long total, SlotCache slots) {
        this.total = total;
        this.slots = slots;
        parts = new Part[PARTS];
        for (int i = 0; i < PARTS; i++) {
            parts[i] = new Part();
        }
        long least = total - slots.budget();
        enabled = least / PARTS > 0;
        wholeLimit = (int) Math.min(Integer.MAX_VALUE, least / 128);
    }

    /**
     * Largest block whose bytes are cached whole, not only their first bytes: a 128th of the least
     * the entries hold (what the slots leave when they fill their whole budget), half a part's
     * share, so that one block never takes a part's share alone. Below a page for the smallest
     * caches (entries under 512 KiB), where only first bytes are kept.
     */
    int wholeLimit() {
        return wholeLimit;
    }

    /** Bytes the entries may hold now: what the slots leave. */
    private long budget() {
        return total - slots.bytes();
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
        Node n = part(handle).find(handle);
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

    /**
     * Caches {@code prefix}, which the cache owns from now on (the caller does not write it again);
     * it replaces a shorter copy of the same block (its first bytes, where {@code prefix} is the
     * block read whole). The caller holds a view lock of the block's stripe, as for every read of
     * an entry, so no {@code next} rewrite runs meanwhile and both copies hold the same bytes.
     */
    void put(long handle, byte[] prefix) {
        if (!enabled || handle == 0) {
            return; // 0 marks an empty slot of the index; no block has it
        }
        Part p = part(handle);
        synchronized (p) {
            Node old = p.find(handle);
            if (old != null) {
                if (old.bytes.length < prefix.length) {
                    count(p, prefix.length - old.bytes.length);
                    old.bytes = prefix;
                    evict(p);
                }
                return; // else another reader cached the same bytes first
            }
            Node n = new Node(handle, prefix);
            p.insert(n);
            p.queue.add(n);
            count(p, prefix.length + OVERHEAD);
            evict(p);
        }
    }

    /**
     * Drops unmarked entries from the oldest end of {@code p}'s queue while the cache holds more
     * than its budget and {@code p} more than its share of it (a 64th), or the cache more than an
     * eighth over its budget; the caller holds {@code p}. The budget is the whole cache's, not the
     * part's, so that a part holding large entries may hold more than its share while others hold
     * less (the entries of a corpus with a heavy tail of sizes spread unevenly over 64 parts); the
     * eighth bounds what parts below their share, which do not evict, add while others are over.
     */
    private void evict(Part p) {
        long budget = budget();
        long share = budget / PARTS;
        long most = budget + budget / 8;
        int walk = 2 * p.queue.size();
        while ((held.get() > budget && p.bytes > share || held.get() > most) && walk-- > 0) {
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
                p.remove(n.handle); // a mapped node: the index holds it, and no other of its handle
                n.mapped = false;
                count(p, -(n.bytes.length + OVERHEAD));
            }
        }
    }

    /** Adds {@code delta} to the bytes {@code p} and the whole cache hold; the caller holds {@code p}. */
    private void count(Part p, long delta) {
        p.bytes += delta;
        held.addAndGet(delta);
    }

    /** The block's {@code next} field and its check were rewritten on disk. */
    void next(long handle, long next, int check) {
        if (!enabled) {
            return;
        }
        Part p = part(handle);
        synchronized (p) {
            // under the monitor: a lookup there never misses a node (nothing moves them meanwhile),
            // and a missed one would keep the old next
            Node n = p.find(handle);
            if (n != null) {
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
            Node n = p.remove(handle); // under the monitor: no resize or removal runs, so no false miss
            if (n == null) {
                return;
            }
            n.mapped = false;
            count(p, -(n.bytes.length + OVERHEAD));
            if (++p.stale > 64 && p.stale > p.queue.size() / 2) {
                p.queue.removeIf(x -> !x.mapped);
                p.stale = 0;
            }
        }
    }

    /**
     * Drops every block, leaving each part as a new cache's: the store closed (see {@link
     * TableStore#dropCaches}). Under each part's monitor, as any removal; a reader racing with it
     * misses, and reads the device.
     */
    void clear() {
        for (Part p : parts) {
            synchronized (p) {
                for (Node n : p.queue) {
                    n.mapped = false;
                }
                p.queue.clear();
                p.stale = 0;
                p.index = new Index(MIN_SLOTS);
                p.count = 0;
                count(p, -p.bytes);
            }
        }
    }

    /** Bytes of the blocks the index holds, overhead included, counted afresh (not by the parts): for tests. */
    long mappedBytes() {
        long b = 0;
        for (Part p : parts) {
            synchronized (p) {
                for (Node n : p.index.nodes) {
                    if (n != null) {
                        b += n.bytes.length + OVERHEAD;
                    }
                }
            }
        }
        return b;
    }

    /** The index of {@code handle}'s part as it is now: for tests of readers that loaded it before a resize. */
    Object indexOf(long handle) {
        return part(handle).index;
    }

    /** A lookup through {@code index} (from {@link #indexOf}), as a reader that loaded it earlier goes on: for tests. */
    byte[] getThrough(Object index, long handle) {
        Node n = Part.find((Index) index, handle);
        return n == null ? null : n.bytes;
    }

    /**
     * Bytes held, overhead included, as the whole cache counts them, once they equal the sum of
     * the parts' counts (else an {@link IllegalStateException}): for tests, when no insertion runs.
     */
    long bytes() {
        long b = 0;
        for (Part p : parts) {
            synchronized (p) {
                b += p.bytes;
            }
        }
        if (b != held.get()) {
            throw new IllegalStateException("the parts hold " + b + " bytes, the cache counts " + held.get());
        }
        return b;
    }
}
