package org.htod.table;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.htod.core.CorruptStoreException;
import org.htod.core.StepListener;
import org.htod.core.alloc.Heap;

/**
 * Checks the tables of a store against their invariants by reading everything; throws {@link
 * CorruptStoreException} naming the first violation:
 *
 * <ul>
 *   <li>the heap's own invariants ({@code Heap.verify});
 *   <li>every chain is well formed: no entry reached twice (no cycle, no shared tail), every entry
 *       an allocated block whose CRC matches, of its table, with the stored hash equal to the
 *       hash of its key by the table's function (its header's) and landing in the bucket that
 *       holds it, and no key twice;
 *   <li>no doubling is left half-unzipped, and each table's entry count equals its size;
 *   <li>with {@code checkLeaks}, every allocated block of the heap is reached from the catalog
 *       (meaningful when no operation is running, as after a close and reopen).
 * </ul>
 *
 * Each table is walked with all its writer locks held, so writers wait and readers do not.
 */
public final class TableVerifier {
    private TableVerifier() {}

    static TableVerifyReport verify(TableStore ts, boolean checkLeaks) {
        return verify(ts, checkLeaks, h -> false, StepListener.NONE);
    }

    /**
     * {@link #verify(TableStore, boolean)}, counting the blocks {@code alsoReached} accepts as
     * reached (log mode's checkpoint), and telling {@code progress} of the blocks met: each header
     * the heap's check reads, then each block a walk reaches and each the sweep visits.
     */
    static TableVerifyReport verify(TableStore ts, boolean checkLeaks, java.util.function.LongPredicate alsoReached,
            StepListener progress) {
        Heap heap = ts.heap();
        ts.gate().sync(); // frees what waits, so that what stays allocated is what the tables hold
        org.htod.core.alloc.HeapStats st = heap.stats();
        long total = st.allocatedBlocks() > 0 ? st.allocatedBlocks() * 3 + st.freeBlocks() : -1;
        long headers = heap.verify(progress, total).headersRead();
        TableRecovery.Marks marks = new TableRecovery.Marks(heap, progress, headers, total);
        long[] reached = {0};
        long[] longest = {0};
        long entries = 0;
        HashtableOnDisk cat = ts.catalog();
        table(cat, marks, reached, longest);
        List<TableStore.CatalogEntry> tables = ts.catalogEntries();
        for (TableStore.CatalogEntry e : tables) {
            HashtableOnDisk t = ts.tableAt(e.name(), e.value(), e.entry());
            long named = TableStore.headerOf(e.value(), e.name(), e.entry(), heap);
            if (t.header != named) {
                throw new CorruptStoreException("table '" + e.name() + "' is open at header 0x"
                        + Long.toHexString(t.header) + " but the catalog names 0x" + Long.toHexString(named),
                        heap.address(named));
            }
            entries += table(t, marks, reached, longest);
        }
        long[] allocated = {0};
        long[] leaked = {0, 0, 0}; // leaked, first leaked, accounted for outside the tables
        heap.forEachAllocated((handle, length) -> {
            marks.tick();
            allocated[0]++;
            if (!marks.marked(handle)) {
                if (alsoReached.test(handle)) {
                    leaked[2]++;
                } else if (leaked[0]++ == 0) {
                    leaked[1] = handle;
                }
            }
        });
        long reachedAllocated = allocated[0] - leaked[0] - leaked[2];
        if (reachedAllocated != reached[0]) {
            throw new CorruptStoreException("the tables reach " + reached[0] + " blocks, but only " + reachedAllocated
                    + " of them are allocated in the heap of " + heap.device().name(), -1);
        }
        if (checkLeaks && leaked[0] > 0) {
            throw new CorruptStoreException(leaked[0] + " allocated blocks of " + heap.device().name()
                    + " are reached by no table, e.g. the block at offset " + heap.address(leaked[1]) + " of "
                    + heap.blockSize(leaked[1]) + " bytes", heap.address(leaked[1]));
        }
        marks.finish();
        return new TableVerifyReport(tables.size(), entries, reached[0], allocated[0], longest[0]);
    }

    private static void mark(TableRecovery.Marks marks, long handle, long[] reached, HashtableOnDisk t, String what) {
        if (marks.marked(handle)) {
            throw t.corrupt(handle, what + " reached once", "it reached again: a cycle, or a block shared by two structures");
        }
        marks.mark(handle);
        reached[0]++;
    }

    /** Walks table {@code t}, returning its entries; {@code longest[0]} rises to its longest chain. */
    private static long table(HashtableOnDisk t, TableRecovery.Marks marks, long[] reached, long[] longest) {
        t.lockAllWriters();
        try {
            Shape s = t.shape;
            TableHeader.State st = TableHeader.read(t.heap, t.header, true);
            if (st.array() != s.array.directory || st.newArray() != (s.doubling() ? s.next.directory : 0)
                    || st.moved() != s.moved || st.tableId() != t.tableId || !st.hash().equals(t.hashing)) {
                throw t.corrupt(t.header, "a header naming the arrays in use (" + s + ") and the table's " + t.hashing,
                        "header " + st);
            }
            if (s.doubling() && s.unzipFrom != s.moved) {
                throw t.corrupt(t.header, "no unzip left open at rest", "buckets " + s.unzipFrom + ".." + s.moved);
            }
            mark(marks, t.header, reached, t, "a table header");
            s.array.forEachBlock(h -> mark(marks, h, reached, t, "a bucket array block"));
            checkArray(t, s.array);
            if (s.doubling()) {
                s.next.forEachBlock(h -> mark(marks, h, reached, t, "a bucket array block"));
                checkArray(t, s.next);
            }
            long n = s.n();
            long entries = 0;
            for (long b = 0; b < n; b++) {
                if (s.doubling() && b < s.moved) {
                    entries += chain(t, s.next, b, marks, reached, longest);
                    entries += chain(t, s.next, b + n, marks, reached, longest);
                } else {
                    entries += chain(t, s.array, b, marks, reached, longest);
                }
            }
            if (entries != t.count.get()) {
                throw t.corrupt(t.header, "as many entries as the table's size, " + t.count.get(), entries + " entries");
            }
            return entries;
        } finally {
            t.unlockAllWriters();
        }
    }

    private static void checkArray(HashtableOnDisk t, BucketArray a) {
        BucketArray again = BucketArray.load(t.heap, a.directory, null);
        if (again.bucketCount != a.bucketCount || !Arrays.equals(again.segments, a.segments)) {
            throw t.corrupt(a.directory, "the bucket directory held in memory", "another one on disk");
        }
    }

    private static long chain(HashtableOnDisk t, BucketArray a, long bucket, TableRecovery.Marks marks, long[] reached,
            long[] longest) {
        long cur = a.get(t.heap, bucket);
        long n = 0;
        java.util.Set<ByteBuffer> keys = new java.util.HashSet<>();
        while (cur != 0) {
            t.entries.checkLink(cur);
            mark(marks, cur, reached, t, "an entry");
            // From the disk, not the cache: the heap header (allocated, of the handle's size), then
            // every checksum of the entry.
            ByteBuffer full = t.heap.read(cur);
            if (full.remaining() < Entries.OVERHEAD || full.remaining() < Entries.KEY_OFFSET
                    + (long) Math.max(0, Entries.rawKeyLength(full))) {
                throw t.corrupt(cur, "an entry of at least its fixed fields and key", full.remaining() + " bytes");
            }
            Entries.Head h = Entries.head(full, cur, t::corrupt);
            Entries.checkNext(full, cur, t::corrupt);
            if (h.length() > full.remaining()) {
                throw t.corrupt(cur, "an entry of " + h.length() + " bytes", "a block payload of " + full.remaining());
            }
            Entries.checkValue(full, Entries.KEY_OFFSET + h.keyLength, h, cur, t::corrupt);
            if (h.tableId != t.tableId) {
                throw t.corrupt(cur, "an entry of table id 0x" + Long.toHexString(t.tableId),
                        "table id 0x" + Long.toHexString(h.tableId));
            }
            byte[] cached = t.gate.cache.get(cur);
            int same = Math.min(cached == null ? 0 : cached.length, full.remaining());
            if (cached != null && !ByteBuffer.wrap(cached, 0, same).equals(full.duplicate().limit(same))) {
                throw t.corrupt(cur, "the entry cache holding the bytes on disk", "other bytes in the cache");
            }
            byte[] key = Entries.key(full, h);
            if (t.hash(key) != h.hash) {
                throw t.corrupt(cur, "hash 0x" + Long.toHexString(t.hash(key)) + " of the entry's key by the table's "
                        + t.hashing,
                        "0x" + Long.toHexString(h.hash));
            }
            if ((h.hash & a.mask()) != bucket) {
                throw t.corrupt(cur, "an entry hashing to bucket " + bucket + " of " + a.bucketCount,
                        "one hashing to bucket " + (h.hash & a.mask()));
            }
            if (!keys.add(ByteBuffer.wrap(key))) {
                throw t.corrupt(cur, "each key once in bucket " + bucket, "a second entry for one key");
            }
            if (h.version < 1) {
                throw t.corrupt(cur, "a version of at least 1", Long.toString(h.version));
            }
            n++;
            cur = h.next;
        }
        longest[0] = Math.max(longest[0], n);
        return n;
    }
}
