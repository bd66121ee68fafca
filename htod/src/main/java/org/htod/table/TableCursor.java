package org.htod.table;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.locks.Lock;

/**
 * Iteration over a table (the paper's Ik, Iv, Ie), streaming from disk one bucket at a time.
 *
 * <p>The cursor walks hash classes, not bucket numbers, so that a doubling (or a clear) during
 * the iteration neither repeats nor skips entries. A class {@code (c, m)} is the set of hashes
 * with {@code hash mod m == c}; the iteration visits the classes {@code (c, m0)}, {@code c = 0 ..
 * m0-1}, of the bucket count {@code m0} when it began. When the table has more buckets than
 * {@code m} where a class lies, the class is split into {@code (c, 2m)} and {@code (c + m, 2m)},
 * visited in turn; when it has as many or fewer, the class lies within one bucket and is read
 * from it, filtered. Each class is read under the view lock of its stripe, so it is consistent
 * with every single update. Memory: one bucket's entries plus a stack of log2(n/m0) classes.
 */
final class TableCursor implements Iterator<StoredEntry> {
    private final HashtableOnDisk t;
    private final boolean withValues;
    private final boolean includeExpired;
    private final long m0;
    private long nextTop;
    private final ArrayDeque<long[]> classes = new ArrayDeque<>();
    private final ArrayDeque<StoredEntry> ready = new ArrayDeque<>();

    TableCursor(HashtableOnDisk t, boolean withValues, boolean includeExpired) {
        this.t = t;
        this.withValues = withValues;
        this.includeExpired = includeExpired;
        this.m0 = t.shape.n();
    }

    @Override
    public boolean hasNext() {
        while (ready.isEmpty()) {
            if (classes.isEmpty()) {
                if (nextTop >= m0) {
                    return false;
                }
                classes.push(new long[] {nextTop++, m0});
            }
            long[] cm = classes.pop();
            visit(cm[0], cm[1]);
        }
        return true;
    }

    @Override
    public StoredEntry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return ready.poll();
    }

    private void visit(long c, long m) {
        t.ensureOpen();
        Lock r = t.lockViewOrBeside(HashtableOnDisk.stripe(c));
        try {
            Shape s = t.shape;
            BucketArray a = s.arrayOf(c);
            long size = a.bucketCount;
            if (m < size) {
                classes.push(new long[] {c + m, 2 * m});
                classes.push(new long[] {c, 2 * m});
                return;
            }
            // A doubling batch cut in its unzip that cannot be finished: its classes are read
            // from the old chains it kept, as a lookup does.
            Doubler.Unfinished u = t.unfinished;
            long[] kept = t.keptChain(u, c);
            if (kept != null) {
                visitKept(kept, u, c, m);
                return;
            }
            long bucket = c & a.mask();
            long cur = t.slot(a, bucket);
            long steps = 0;
            long limit = t.count.get() + 1024;
            while (cur != 0) {
                EntryLoader.Loaded e = t.entries.load(cur, withValues);
                t.entries.checkBucket(e, a, bucket);
                Entries.Head h = e.h;
                // the clock is read only for an entry with an expiry: most have none
                if ((h.hash & (m - 1)) == c && (includeExpired || h.expiry == 0 || h.expiry > t.clock.getAsLong())) {
                    ready.add(t.entries.decode(e, withValues));
                }
                cur = h.next;
                if (++steps > limit) {
                    throw t.corrupt(cur, "a chain of at most " + limit + " entries", "a longer one, or a cycle");
                }
            }
        } finally {
            r.unlock();
        }
    }

    /** The entries of class {@code (c, m)} in {@code kept}, an old chain of the batch {@code u}. */
    private void visitKept(long[] kept, Doubler.Unfinished u, long c, long m) {
        int len = kept.length / 4;
        for (int j = 0; j < len; j++) {
            if ((kept[len + j] & (m - 1)) != c) {
                continue;
            }
            EntryLoader.Loaded e = t.keptEntry(u, kept, j, withValues);
            Entries.Head h = e.h;
            if (includeExpired || h.expiry == 0 || h.expiry > t.clock.getAsLong()) {
                ready.add(t.entries.decode(e, withValues));
            }
        }
    }
}
