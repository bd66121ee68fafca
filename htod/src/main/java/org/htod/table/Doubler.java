package org.htod.table;

import java.util.ArrayList;
import java.util.List;
import org.htod.core.StoreFullException;

/**
 * Hashing by doubling, restartable (core paper §3): a table of {@code n} buckets grows to
 * {@code 2n}, bucket {@code b}'s chain splitting into buckets {@code b} and {@code b + n} of the
 * new array by bit {@code n} of each entry's hash. Entries are not copied: they are relinked, by
 * rewriting their {@code next} fields in place.
 *
 * <ol>
 *   <li><b>Start.</b> Allocate the new array (zeros) and sync; write the header with {@code
 *       newArray} set and {@code moved = 0}.
 *   <li><b>A batch</b> of old buckets {@code [from, from + k)}, every writer lock held:
 *       <ol type="a">
 *         <li>If links wait to be written or blocks to be freed, sync, which writes and frees them.
 *         <li>Point new slots {@code b} and {@code b + n} at the first entry of each class in the
 *             old chain. The old chain is untouched, so each new slot reaches a superset of its
 *             class through it. Sync: the slots, and the frees of step a, are durable.
 *         <li>Header: {@code moved = from + k}, {@code unzipFrom = from}. Sync. From now on the
 *             new array is the truth for these buckets, and readers are switched to it.
 *         <li>Unzip, with readers held off: walking each old chain in order, point every entry's
 *             {@code next} at the next entry of its own class (or 0). Sync.
 *         <li>Header: {@code unzipFrom = moved}. Sync. Only then may writers touch the batch.
 *       </ol>
 *   <li><b>Finish.</b> Header: the new array in use, no doubling. Sync. Free the old array.
 * </ol>
 *
 * <p>A crash anywhere leaves a table that opens with every entry. Before the header of step c is
 * durable, the old chains are intact and the header still sends every reader of these buckets to
 * them. After it, the new slots reach every entry of the batch, except that a crash during the
 * unzip, whose writes may land in any subset, can cut entries out of both chains. Recovery
 * therefore relinks the buckets {@code [unzipFrom, moved)} from the entries their chains still
 * reach plus the unreachable entries of this table that hash there (see {@link TableRecovery}).
 * Those can only be entries cut out by the unzip: no writer runs while the range is open (from
 * the header of step c to that of step e), and every block of the table unlinked before the batch
 * was freed durably by step b's sync.
 *
 * <p>A failure that is no crash, a write or sync that throws while the table stays open, between
 * the headers of steps c and e leaves the batch {@link Unfinished}: every writer, and every reader
 * once the unzip has begun, redoes steps c to e before it touches the table, and until that
 * succeeds it gets the failure instead.
 *
 * <p>Readers are held up only during step d (no sync inside but the last); writers wait for a
 * batch, never for the whole doubling. A batch costs up to five syncs, and a doubling makes about
 * 256 batches at most, so the syncs per doubling stay bounded whatever the table size.
 */
final class Doubler {
    private Doubler() {}

    /** Largest array that a table without entries replaces at once by a larger one (see {@code Logged.growEmpty}). */
    static final long EMPTY_GROWTH_MAX_BUCKETS = 4096;

    /** Old buckets moved per batch: about 1/256 of the table, 1024 to 16384 (and within one segment). */
    static int batchSize(Shape s, int minBatch) {
        long k = Math.max(minBatch, Math.min(16384, s.n() / 256));
        k = Math.min(k, s.n());
        // A power of two within one segment of the old array, hence batch starts are multiples of
        // it and the runs of new slots [from, from + k) and [from + n, from + n + k) each lie in one
        // segment of the new array too.
        k = Math.min(k, s.array.segmentSlots());
        return (int) k;
    }

    static void run(HashtableOnDisk t) {
        if (t.gate.logged()) {
            Logged.run(t);
            return;
        }
        if (!start(t)) {
            return;
        }
        while (batch(t)) {
            // one batch per lock hold, so that writers get in between batches
        }
    }

    /**
     * Doubling in log mode: the same relinking, but each step is one install record (the new
     * array's allocation and the table's state; then per batch, the new slots, the unzipped next
     * links and the progress; then the switch and the old array's free), committed through the
     * log before anything is written in place. A crash redoes or forgets each step whole, so no
     * range is ever left half-unzipped, and readers switch to a batch's new chains at once, under
     * every view lock, through the waiting links.
     */
    static final class Logged {
        private Logged() {}

        static void run(HashtableOnDisk t) {
            while (step(t, 0)) {
                // one batch per lock hold, so that readers and the next install get in between
            }
        }

        /**
         * One step of a doubling that is due for the entries and {@code coming} more: its start,
         * or one batch, or its finish; returns whether more steps remain (after a finish: whether
         * the next doubling is due already). The flusher runs one at a time between its installs,
         * so that a doubling never holds the write buffer's draining up for long.
         */
        static boolean step(HashtableOnDisk t, long coming) {
            t.gate.commitLeftovers();
            Shape s = t.shape;
            if (!s.doubling()) {
                if (!t.overLoaded(s, coming) || t.isClosed()) {
                    return false;
                }
                if (growEmpty(t, s, coming)) {
                    return t.overLoaded(t.shape, coming);
                }
                BucketArray next = allocateOrWait(t, 2 * s.n());
                if (next == null) {
                    return false;
                }
                t.lockAllWriters();
                try {
                    t.lockAllViews();
                    try {
                        t.shape = new Shape(s.array, next, 0, 0);
                    } finally {
                        t.unlockAllViews();
                    }
                    t.gate.touch(t);
                } finally {
                    t.unlockAllWriters();
                }
                t.gate.sync();
                return true;
            }
            return batch(t, coming);
        }

        /**
         * A table without entries grows at once to the buckets its entries to come call for: a new
         * array, the old one freed, one install record, as a doubling's finish; there is no chain
         * to split. A load of 27,800 objects into a fresh store otherwise doubled its empty table
         * from 64 buckets to 16,384 before the first install, three steps or more a doubling (its
         * start, batches and finish), each a durable install record. Only small arrays, whose
         * slots are checked for zero here (the count says no entry; the slots must agree);
         * returns whether it grew.
         */
        private static boolean growEmpty(HashtableOnDisk t, Shape s, long coming) {
            if (t.count.get() != 0 || s.n() > EMPTY_GROWTH_MAX_BUCKETS) {
                return false;
            }
            long buckets = t.bucketsFor(s.n(), coming);
            t.lockAllWriters();
            try {
                if (t.shape != s || t.count.get() != 0 || t.isClosed()) {
                    return false;
                }
                for (long b = 0; b < s.n(); b++) {
                    if (t.slot(s.array, b) != 0) {
                        return false;
                    }
                }
                BucketArray next = allocateOrWait(t, buckets);
                if (next == null) {
                    return false;
                }
                switchTo(t, s, next);
                return true;
            } finally {
                t.unlockAllWriters();
            }
        }

        /**
         * A new array of {@code buckets}, or null when the heap has no room for it (the store
         * full): the doubling then waits, the table as it was, and {@link
         * HashtableOnDisk#noRoomToDouble} says so until an array is had. The flusher, which runs
         * the steps before its installs, would otherwise fail every round before it installed
         * anything, the removals that make room among what it left in the buffer. Chains grow
         * longer meanwhile; nothing else depends on the doubling.
         */
        private static BucketArray allocateOrWait(HashtableOnDisk t, long buckets) {
            try {
                BucketArray next = BucketArray.allocate(t.heap, buckets, t.gate.slots);
                t.noRoomToDouble = false;
                return next;
            } catch (StoreFullException e) {
                if (!e.heapHasNoRoom()) {
                    throw e; // the device failed a write: its error goes on
                }
                t.noRoomToDouble = true;
                return null;
            }
        }

        /**
         * A doubling's finish, and an empty table's growth: {@code next} becomes the table's only
         * array, readers switched under every view lock, and the old array's blocks are freed by
         * the same install record, which this commits. The caller holds every writer lock.
         */
        private static void switchTo(HashtableOnDisk t, Shape s, BucketArray next) {
            t.lockAllViews();
            try {
                t.shape = new Shape(next);
            } finally {
                t.unlockAllViews();
            }
            s.array.forEachBlock(t.gate::retire);
            t.gate.touch(t);
            t.gate.sync();
        }

        private static boolean batch(HashtableOnDisk t, long coming) {
            t.lockAllWriters();
            try {
                Shape s = t.shape;
                if (t.isClosed() || !s.doubling()) {
                    return false;
                }
                long n = s.n();
                if (s.moved >= n) {
                    switchTo(t, s, s.next);
                    return t.overLoaded(t.shape, coming); // a flusher behind a load goes on to the next doubling
                }
                long from = s.moved;
                int k = (int) Math.min(Math.min(batchSize(s, t.doublingMinBatch),
                        t.gate.maxDoublingBatch(t.loadPermille)), n - from);
                long[] lo = new long[k];
                long[] hi = new long[k];
                List<long[]> chains = new ArrayList<>(k);
                // maxDoublingBatch counts chains of twice the mean length; chains longer than that
                // (keys whose hashes share their low bits) end the batch early, at the budget,
                // so that its record stays one record. A bucket always moves: a chain over the
                // budget alone goes out as an install unit (see Installer).
                long budget = t.gate.recordBudget();
                long bytes = InstallRecord.TABLE_BYTES;
                for (int i = 0; i < k; i++) {
                    long[] chain = readChain(t, t.slot(s.array, from + i), s.array, from + i);
                    long cost = (long) InstallRecord.LINK_BYTES * (2 + relinked(chain, n));
                    if (i > 0 && bytes + cost > budget) {
                        k = i;
                        break;
                    }
                    bytes += cost;
                    chains.add(chain);
                    int len = chain.length / 4;
                    for (int j = len - 1; j >= 0; j--) {
                        if ((chain[len + j] & n) != 0) {
                            hi[i] = chain[j];
                        } else {
                            lo[i] = chain[j];
                        }
                    }
                }
                t.lockAllViews();
                try {
                    for (int i = 0; i < k; i++) {
                        long b = from + i;
                        var view = t.views[HashtableOnDisk.stripe(b)];
                        if (lo[i] != 0) {
                            t.gate.setLink(s.next.segment(b), s.next.offsetIn(b), lo[i], b, view, false);
                        }
                        if (hi[i] != 0) {
                            t.gate.setLink(s.next.segment(b + n), s.next.offsetIn(b + n), hi[i], b + n, view, false);
                        }
                        long[] chain = chains.get(i);
                        int len = chain.length / 4;
                        for (int j = 0; j < len; j++) {
                            long target = nextOfClass(chain, j, n);
                            if (chain[2 * len + j] != target) {
                                t.gate.setLink(chain[j], Entries.NEXT_OFFSET, target, chain[3 * len + j], view, true);
                            }
                        }
                    }
                    t.shape = new Shape(s.array, s.next, from + k, from + k);
                } finally {
                    t.unlockAllViews();
                }
                t.gate.touch(t);
                t.gate.sync();
                return true;
            } finally {
                t.unlockAllWriters();
            }
        }
    }

    /** Entries of a chain (as {@link #readChain} gives it) whose next changes when it splits by bit {@code n}. */
    static int relinked(long[] chain, long n) {
        int len = chain.length / 4;
        int changed = 0;
        for (int j = 0; j < len; j++) {
            if (chain[2 * len + j] != nextOfClass(chain, j, n)) {
                changed++;
            }
        }
        return changed;
    }

    /** The next entry after position {@code j} of the chain in {@code j}'s own class of bit {@code n}, or 0. */
    static long nextOfClass(long[] chain, int j, long n) {
        int len = chain.length / 4;
        boolean high = (chain[len + j] & n) != 0;
        for (int x = j + 1; x < len; x++) {
            if (((chain[len + x] & n) != 0) == high) {
                return chain[x];
            }
        }
        return 0;
    }

    /** Begins a doubling if none is under way and one is due; returns whether one is under way now. */
    private static boolean start(HashtableOnDisk t) {
        Shape s = t.shape;
        if (s.doubling()) {
            return true;
        }
        if (!t.overLoaded(s)) {
            return false;
        }
        BucketArray next = BucketArray.allocate(t.heap, 2 * s.n(), t.gate.slots);
        boolean named = false; // once the header write is issued, the array may be named on disk: never freed here
        try {
            t.gate.sync(); // the new array is durable before the header names it
            t.lockAllWriters();
            try {
                if (t.isClosed() || t.shape != s) {
                    // Closed meanwhile (close() waits for this doubling, so the heap is still open),
                    // or another doubling won: the array is nobody's.
                    next.free(t.heap, t.gate.slots);
                    return false;
                }
                // In use before its header is written: with nothing moved, readers and writers see
                // no difference, and if the header write fails, the array is not allocated again by
                // the next start (a leak that only an unclean open would free). The first batch's
                // header names it, and a clean close writes a header in doubt again.
                Shape d = new Shape(s.array, next, 0, 0);
                t.lockAllViews();
                try {
                    t.shape = d;
                } finally {
                    t.unlockAllViews();
                }
                named = true;
                t.writeHeader(d, t.count.get());
                return true;
            } finally {
                t.unlockAllWriters();
            }
        } catch (RuntimeException e) {
            if (!named) {
                try {
                    next.free(t.heap, t.gate.slots); // a failed sync: give the array back if the heap still takes frees
                } catch (RuntimeException again) {
                    e.addSuppressed(again); // it stays allocated and unnamed: a leak the next recovery frees
                }
            }
            throw e;
        }
    }

    /** Moves one batch, or finishes; returns whether there is more to do. */
    private static boolean batch(HashtableOnDisk t) {
        t.lockAllWriters();
        try {
            Shape s = t.shape;
            if (t.isClosed() || !s.doubling()) {
                return false;
            }
            if (t.unfinished != null) {
                finishFailedLocked(t); // a failed batch first
                return true;
            }
            long n = s.n();
            if (s.moved >= n) {
                finish(t, s);
                return false;
            }
            long from = s.moved;
            int k = (int) Math.min(batchSize(s, t.doublingMinBatch), n - from);
            if (t.gate.busy()) {
                // a: writes the links that wait and frees the blocks that wait, so that the chains
                // on disk are exact and step b's sync makes the frees durable
                t.gate.sync();
            }
            // b. first entry of each class, read from the intact old chains
            long[] firsts = s.array.getRun(t.heap, from, k);
            List<long[]> chains = new ArrayList<>(k); // per bucket: handles, hashes, next fields, salts
            long[] lo = new long[k];
            long[] hi = new long[k];
            for (int i = 0; i < k; i++) {
                long[] chain = readChain(t, firsts[i], s.array, from + i);
                chains.add(chain);
                int len = chain.length / 4;
                for (int j = 0; j < len; j++) {
                    long handle = chain[j];
                    boolean high = (chain[len + j] & n) != 0;
                    if (high && hi[i] == 0) {
                        hi[i] = handle;
                    } else if (!high && lo[i] == 0) {
                        lo[i] = handle;
                    }
                }
            }
            s.next.setRun(t.heap, from, lo);
            s.next.setRun(t.heap, from + n, hi);
            t.gate.sync();
            moveAndUnzip(t, new Unfinished(s, from, k, chains, false));
            return true;
        } finally {
            t.unlockAllWriters();
        }
    }

    /**
     * A batch whose steps c to e began: from its header of step c on, the disk may name its range
     * moved, so nothing may change its chains until they are exact and the range is closed. A
     * failure there leaves it in {@link HashtableOnDisk#unfinished}, and every reader and writer
     * of the table finishes it first ({@link #finishFailed}): the old chains, read in step b, are
     * what it relinks, and so the batch is redone from them, which no writer can have changed.
     * Without that, a failed unzip left its chains half relinked while writers went on, and the
     * next batch's header closed the range with entries of the other half still in them.
     * {@code cut}: the failure fell in the unzip, so a chain may miss entries, and readers too
     * must wait for the batch; before it, they read the old chains, which are intact.
     */
    record Unfinished(Shape s, long from, int k, List<long[]> chains, boolean cut) {
        Unfinished withCut() {
            return new Unfinished(s, from, k, chains, true);
        }
    }

    /**
     * Finishes the batch a failure left unfinished, if any; throws what stops it. The caller
     * holds no lock of the table.
     */
    static void finishFailed(HashtableOnDisk t) {
        t.lockAllWriters();
        try {
            finishFailedLocked(t);
        } finally {
            t.unlockAllWriters();
        }
    }

    /** {@link #finishFailed}, the caller holding every writer lock. */
    static void finishFailedLocked(HashtableOnDisk t) {
        Unfinished u = t.unfinished;
        if (u != null && !t.isClosed()) {
            moveAndUnzip(t, u);
        }
    }

    /**
     * Steps c to e of a batch whose new slots are durable, from the old chains read in step b;
     * redone whole after a failure (each write sets what the first try set). The caller holds
     * every writer lock.
     */
    private static void moveAndUnzip(HashtableOnDisk t, Unfinished u) {
        Shape s = u.s();
        long n = s.n();
        t.unfinished = u;
        // c. the batch is moved, durably
        Shape moved = new Shape(s.array, s.next, u.from() + u.k(), u.from());
        t.writeHeader(moved, t.count.get());
        t.gate.sync();
        // d. unzip, with readers held off
        t.lockAllViews();
        try {
            t.shape = moved;
            for (long[] chain : u.chains()) {
                unzip(t, chain, n);
            }
        } catch (RuntimeException e) {
            t.unfinished = u.withCut(); // before readers get in
            throw e;
        } finally {
            t.unlockAllViews();
        }
        t.gate.sync();
        // e. the batch's chains are exact: close the range before writers may touch it
        Shape closed = new Shape(s.array, s.next, u.from() + u.k(), u.from() + u.k());
        t.writeHeader(closed, t.count.get());
        t.gate.sync();
        t.shape = closed; // readers see no difference: same arrays, same progress
        t.unfinished = null;
    }

    /**
     * Handles, hashes, next fields and link salts of the chain from {@code first}, as one array of
     * four parts; every entry checked, and checked to hash into {@code bucket} of {@code a}.
     */
    static long[] readChain(HashtableOnDisk t, long first, BucketArray a, long bucket) {
        List<EntryLoader.Loaded> items = new ArrayList<>();
        long cur = first;
        long limit = t.count.get() + 1024;
        while (cur != 0) {
            EntryLoader.Loaded e = t.entries.load(cur);
            t.entries.checkBucket(e, a, bucket);
            items.add(e);
            cur = e.h.next;
            if (items.size() > limit) {
                throw t.corrupt(first, "a chain of at most " + limit + " entries", "a longer one, or a cycle");
            }
        }
        int len = items.size();
        long[] out = new long[4 * len];
        for (int j = 0; j < len; j++) {
            EntryLoader.Loaded e = items.get(j);
            out[j] = e.handle;
            out[len + j] = e.h.hash;
            out[2 * len + j] = e.h.next;
            out[3 * len + j] = e.salt();
        }
        return out;
    }

    /** Points each entry of the chain at the next entry of its own class, in chain order. */
    private static void unzip(HashtableOnDisk t, long[] chain, long n) {
        int len = chain.length / 4;
        for (int j = 0; j < len; j++) {
            long target = nextOfClass(chain, j, n);
            if (chain[2 * len + j] != target) {
                t.writeNext(chain[j], (int) chain[3 * len + j], target);
            }
        }
    }

    /** All old buckets moved: switch the header to the new array, then free the old one. */
    private static void finish(HashtableOnDisk t, Shape s) {
        Shape done = new Shape(s.next);
        t.writeHeader(done, t.count.get());
        t.gate.sync();
        t.lockAllViews();
        try {
            t.shape = done;
        } finally {
            t.unlockAllViews();
        }
        s.array.free(t.heap, t.gate.slots);
    }
}
