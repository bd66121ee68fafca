package org.htod.table;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.htod.core.CorruptStoreException;
import org.htod.core.StepListener;
import org.htod.core.alloc.Heap;

/**
 * The tables' recovery after an unclean shutdown, run when the store opens (the heap has already
 * recovered its own structure):
 *
 * <ol>
 *   <li>Walk every chain of every table from the catalog, marking every block reached (headers,
 *       bucket arrays, entries) and counting the entries: the counts in the headers are only
 *       trusted after a clean close. A key met twice in one chain keeps its first entry, and the
 *       later one is unlinked (see below).
 *   <li>Scan the heap's allocated blocks. An unreached block is either an entry a doubling's
 *       unzip cut out of its chain (an entry of a table that hashes into the range its header
 *       marks as being unzipped, with a valid CRC), which is adopted back, or a leak: an entry
 *       written but never linked, an entry unlinked whose free was lost, a bucket array or table
 *       header never recorded. Leaks are freed.
 *   <li>Relink the buckets of an interrupted unzip from their entries, then sync, then close the
 *       range in the header. A doubling left under way resumes with the next write.
 * </ol>
 *
 * <p>Why a key can be met twice: links wait in memory and a flush writes them after one sync, so
 * a crash during a flush keeps any subset of its link writes. If a key was removed and then put
 * again between two flushes, the new entry is linked at the head of the chain by one link and the
 * old one unlinked by another; a crash that keeps the first and loses the second leaves both
 * reachable. The first is always the newer: a new entry goes to the head of its chain or takes
 * the place of the key's current entry, and the order of the entries that stay in a chain never
 * changes, so an older entry of a key still reachable can only be behind it.
 *
 * <p>The catalog is recovered first, on its own, so that a table whose catalog entry has to be
 * adopted is known before the leak sweep would free its blocks.
 */
public final class TableRecovery {
    private TableRecovery() {}

    static TableRecoveryReport run(TableStore ts, StepListener progress) {
        long t0 = System.nanoTime();
        Heap heap = ts.heap();
        // Progress in blocks, after the heap's recovery's headers: each allocated block is met
        // about twice, once reached by a walk and once by the sweep.
        long base = ts.storage().recoveryReport().headersRead();
        long allocated = heap.stats().allocatedBlocks();
        Marks marks = new Marks(heap, progress, base, allocated > 0 ? base + 2 * allocated : -1);
        long[] freed = {0};
        long relinked = 0;
        long repaired = 0;

        // Reading first, writing after: every walk and the sweep must succeed (every checksum on
        // the way matched) before recovery changes a byte, so that an open that finds damage
        // refuses with the store as it found it, and nothing is freed that a damaged structure
        // might still have reached.
        Walk cat = new Walk(ts.catalog(), true);
        walk(cat, marks);
        List<Walk> repairing = new ArrayList<>();
        if (cat.repairing()) {
            sweep(heap, marks, List.of(cat), null);
            repairing.add(cat);
        }
        // The catalog's entries as the walk found them, with any an interrupted doubling cut out
        // of their chains: iterating the catalog before its relinking would miss those.
        List<Walk> walks = new ArrayList<>();
        for (EntryLoader.Loaded e : cat.kept) {
            String name = new String(e.key(), java.nio.charset.StandardCharsets.UTF_8);
            HashtableOnDisk t = ts.tableAt(name, ts.catalog().entries.value(e), e.handle);
            Walk w = new Walk(t, false);
            walk(w, marks);
            walks.add(w);
        }
        List<Walk> tablesRepairing = new ArrayList<>();
        for (Walk w : walks) {
            if (w.repairing()) {
                tablesRepairing.add(w);
            }
        }
        List<Long> leaks = new ArrayList<>();
        sweep(heap, marks, tablesRepairing, leaks);
        repairing.addAll(tablesRepairing);
        marks.finish();
        ts.storage().begin(); // the heap's own recovery writes, then the store marked open

        List<Walk> all = new ArrayList<>(walks);
        all.add(cat);
        for (Walk w : all) {
            for (Unlink u : w.unlinks) {
                if (u.pred == 0) {
                    u.array.set(heap, u.bucket, u.target);
                } else {
                    w.t.writeNext(u.pred, (int) u.salt, u.target);
                }
            }
        }
        for (Walk w : repairing) {
            relinked += w.adopted;
            repaired += rebuild(w);
        }
        for (long leak : leaks) {
            ts.gate().cache.drop(leak);
            ts.gate().slots.drop(leak);
            heap.free(leak);
            freed[0]++;
        }
        long entries = 0;
        for (Walk w : all) {
            w.t.count.set(w.entries);
            entries += w.entries;
        }
        ts.gate().sync();
        // Every header written again, with the count just found: to the slot not holding the
        // current state, which is the slot a crash may have torn.
        for (Walk w : all) {
            Shape s = w.t.shape;
            Shape closed = w.repairing() ? new Shape(s.array, s.next, s.moved, s.moved) : s;
            w.t.writeHeader(closed, w.t.count.get());
            w.t.shape = closed;
        }
        ts.gate().sync();
        long stale = cat.stale;
        for (Walk w : walks) {
            stale += w.stale;
        }
        return new TableRecoveryReport(Duration.ofNanos(System.nanoTime() - t0), walks.size(), entries - cat.entries, freed[0],
                relinked, repaired, stale);
    }

    /** One table's walk: entries reached, and the chains of an interrupted unzip, to relink. */
    static final class Walk {
        final HashtableOnDisk t;
        final Shape shape;
        long entries;
        long adopted;
        /** Older entries of keys met twice in a chain, unlinked (and left unmarked, for the sweep to free). */
        long stale;
        /** Per old bucket of the unzip range: handle, hash, next, salt of each entry reached or adopted. */
        final Map<Long, List<long[]>> repair = new HashMap<>();
        /** Links that unlink stale entries, written once every walk succeeded. */
        final List<Unlink> unlinks = new ArrayList<>();

        /** The catalog's walk keeps every entry it reaches or adopts. */
        final boolean keepEntries;
        final List<EntryLoader.Loaded> kept = new ArrayList<>();

        Walk(HashtableOnDisk t, boolean keepEntries) {
            this.t = t;
            this.shape = t.shape;
            this.keepEntries = keepEntries;
        }

        boolean repairing() {
            return shape.doubling() && shape.unzipFrom < shape.moved;
        }

        boolean inRepair(long oldBucket) {
            return repairing() && oldBucket >= shape.unzipFrom && oldBucket < shape.moved;
        }
    }

    /** A link to rewrite: slot {@code bucket} of {@code array} if {@code pred} is 0, else pred's next. */
    record Unlink(BucketArray array, long bucket, long pred, long salt, long target) {}

    static void walk(Walk w, Marks marks) {
        HashtableOnDisk t = w.t;
        Shape s = w.shape;
        marks.mark(t.header);
        s.array.forEachBlock(marks::mark);
        if (s.doubling()) {
            s.next.forEachBlock(marks::mark);
        }
        long n = s.n();
        int run = s.array.segmentSlots();
        for (long b0 = 0; b0 < n; b0 += run) {
            long[] heads = s.array.getRun(t.heap, b0, (int) Math.min(run, n - b0));
            for (int i = 0; i < heads.length; i++) {
                long b = b0 + i;
                if (s.doubling() && b < s.moved) {
                    boolean tolerant = w.inRepair(b);
                    chain(w, marks, s.next, b, b, tolerant);
                    chain(w, marks, s.next, b + n, b, tolerant);
                } else {
                    chain(w, marks, s.array, b, b, false);
                }
            }
        }
    }

    /**
     * Follows one chain. Outside an unzip range a chain must be exact: each entry reached once and
     * hashing to its bucket, and a key's later entries, stale, are unlinked. Inside, the two new
     * chains of an old bucket may share a tail and hold entries of each other's class (and hold no
     * stale entry: a doubling batch begins with every link written and synced).
     */
    private static void chain(Walk w, Marks marks, BucketArray a, long bucket, long oldBucket, boolean tolerant) {
        HashtableOnDisk t = w.t;
        long first = a.get(t.heap, bucket);
        long cur = first;
        long pred = 0;
        int predSalt = 0;
        List<EntryLoader.Loaded> seen = new ArrayList<>(); // each entry kept
        java.util.Set<Long> stale = new java.util.HashSet<>(); // each stale entry met, unmarked
        while (cur != 0) {
            t.entries.checkLink(cur);
            if (marks.marked(cur)) {
                if (tolerant) {
                    return;
                }
                throw t.corrupt(cur, "an entry reached once, from bucket " + bucket,
                        "it reached again: a cycle, or two chains sharing it");
            }
            EntryLoader.Loaded e = t.entries.load(cur);
            if (!tolerant) {
                t.entries.checkBucket(e, a, bucket);
            }
            if (!tolerant && keptBefore(seen, e)) {
                // Not marked (the sweep frees it as a leak), but remembered: a stale entry whose
                // link leads back to itself, or to another stale one before it, is a cycle, refused
                // as one; the walk went round it for ever, its unlinks growing until memory ran out.
                if (!stale.add(cur)) {
                    throw t.corrupt(cur, "a stale entry reached once, from bucket " + bucket,
                            "it reached again: a cycle");
                }
                // unlinked once every walk has succeeded: an open that fails writes nothing
                w.unlinks.add(new Unlink(a, bucket, pred, pred == 0 ? bucket : predSalt, e.h.next));
                w.stale++;
                cur = e.h.next;
                continue;
            }
            marks.mark(cur);
            w.entries++;
            if (w.keepEntries) {
                w.kept.add(e);
            }
            if (tolerant) {
                w.repair.computeIfAbsent(oldBucket, k -> new ArrayList<>())
                        .add(new long[] {cur, e.h.hash, e.h.next, e.salt()});
            }
            seen.add(e);
            pred = cur;
            predSalt = e.salt();
            cur = e.h.next;
        }
    }

    /** Whether an entry kept earlier in the chain has the key of {@code e}. */
    private static boolean keptBefore(List<EntryLoader.Loaded> seen, EntryLoader.Loaded e) {
        byte[] key = e.key();
        for (EntryLoader.Loaded s : seen) {
            if (s.h.hash == e.h.hash && s.keyEquals(key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Visits every allocated block not marked: adopts the entries of an unzip range among them
     * into their walk, and adds the others to {@code leaks} if it is given. Reads only.
     */
    private static void sweep(Heap heap, Marks marks, List<Walk> repairing, List<Long> leaks) {
        Map<Long, Walk> byId = new HashMap<>();
        for (Walk w : repairing) {
            byId.put(w.t.tableId, w);
        }
        heap.forEachAllocated((handle, length) -> {
            marks.tick();
            if (marks.marked(handle)) {
                return;
            }
            if (length >= Entries.OVERHEAD && !byId.isEmpty() && adopt(byId, marks, handle)) {
                return;
            }
            if (leaks != null) {
                leaks.add(handle);
            }
        });
    }

    private static boolean adopt(Map<Long, Walk> byId, Marks marks, long handle) {
        Walk any = byId.values().iterator().next();
        ByteBuffer hb = ByteBuffer.allocate(Entries.KEY_OFFSET);
        any.t.heap.readAt(handle, 0, hb);
        Walk w = byId.get(hb.getLong(Entries.TABLE_ID_OFFSET));
        if (w == null) {
            return false;
        }
        HashtableOnDisk t = w.t;
        EntryLoader.Loaded e;
        try {
            e = t.entries.load(handle);
            t.entries.value(e);
        } catch (CorruptStoreException x) {
            return false; // not a whole entry of this table: a leak like any other
        }
        Entries.Head h = e.h;
        long salt = e.salt();
        long oldBucket = h.hash & w.shape.array.mask();
        if (!w.inRepair(oldBucket)) {
            return false;
        }
        marks.mark(handle);
        w.entries++;
        w.adopted++;
        if (w.keepEntries) {
            w.kept.add(e);
        }
        w.repair.computeIfAbsent(oldBucket, k -> new ArrayList<>()).add(new long[] {handle, h.hash, h.next, salt});
        return true;
    }

    /** Relinks the buckets of the unzip range from their entries; returns how many buckets it changed. */
    private static long rebuild(Walk w) {
        HashtableOnDisk t = w.t;
        Shape s = w.shape;
        long n = s.n();
        long changed = 0;
        for (long b = s.unzipFrom; b < s.moved; b++) {
            List<long[]> items = w.repair.getOrDefault(b, List.of());
            List<long[]> lo = new ArrayList<>();
            List<long[]> hi = new ArrayList<>();
            for (long[] it : items) {
                ((it[1] & n) == 0 ? lo : hi).add(it);
            }
            boolean c1 = relink(t, s.next, b, lo);
            boolean c2 = relink(t, s.next, b + n, hi);
            if (c1 || c2) {
                changed++;
            }
        }
        return changed;
    }

    private static boolean relink(HashtableOnDisk t, BucketArray a, long bucket, List<long[]> items) {
        boolean changed = false;
        for (int i = 0; i < items.size(); i++) {
            long target = i + 1 < items.size() ? items.get(i + 1)[0] : 0;
            if (items.get(i)[2] != target) {
                t.writeNext(items.get(i)[0], (int) items.get(i)[3], target);
                changed = true;
            }
        }
        long first = items.isEmpty() ? 0 : items.get(0)[0];
        if (a.get(t.heap, bucket) != first) {
            a.set(t.heap, bucket, first);
            changed = true;
        }
        return changed;
    }

    /** One bit per grain of the heap's used region: which blocks something reaches. */
    static final class Marks {
        private final Heap heap;
        private final long start;
        private final long grains;
        private final long[] bits;
        /** Told every {@link StepListener#EVERY} blocks marked or visited, after {@code base}, of {@code total}. */
        private final StepListener progress;
        private final long base;
        private final long total;
        private long ticks;

        Marks(Heap heap) {
            this(heap, StepListener.NONE, 0, -1);
        }

        Marks(Heap heap, StepListener progress, long base, long total) {
            this.heap = heap;
            this.progress = progress;
            this.base = base;
            this.total = total;
            this.start = heap.firstBlock();
            this.grains = Math.max(0, (heap.tail() - start) / heap.grain());
            if (grains > (long) Integer.MAX_VALUE * 64) {
                throw new IllegalStateException("a heap of " + grains + " grains is beyond the recovery's bitmap");
            }
            this.bits = new long[(int) ((grains + 63) >>> 6)];
        }

        private long index(long handle) {
            long i = (heap.address(handle) - start) / heap.grain();
            if (i < 0 || i >= grains) {
                throw new CorruptStoreException("a structure of the tables names the block at offset "
                        + heap.address(handle) + " of " + heap.device().name() + ", outside the heap's blocks ["
                        + start + ", " + heap.tail() + ")", heap.address(handle));
            }
            return i;
        }

        /** One block met, for the progress: a mask test per block, a call every few thousand. */
        void tick() {
            if ((++ticks & (StepListener.EVERY - 1)) == 0) {
                progress.step(base + ticks, total < 0 ? -1 : Math.max(total, base + ticks));
            }
        }

        /** The last report: every block met, the work done. */
        void finish() {
            progress.step(base + ticks, base + ticks);
        }

        /** Blocks met so far, after the base. */
        long ticks() {
            return ticks;
        }

        void mark(long handle) {
            tick();
            long i = index(handle);
            bits[(int) (i >>> 6)] |= 1L << (i & 63);
        }

        boolean marked(long handle) {
            long i = index(handle);
            return (bits[(int) (i >>> 6)] & (1L << (i & 63))) != 0;
        }
    }
}
