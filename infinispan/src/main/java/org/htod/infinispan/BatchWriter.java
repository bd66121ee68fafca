package org.htod.infinispan;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.WriteBatch;

/**
 * The writes and removes of one {@code NonBlockingStore.batch} call, grouped by segment, and the
 * one place that applies them to htod.
 *
 * <p><b>Log mode</b> (the store's default): the whole batch, over every segment, is one htod
 * {@link WriteBatch}: one log record, one sync at durability SYNC, and after a crash all of it or
 * none of it. Infinispan hands a store one batch per {@code putAll}, per write-behind flush and,
 * since this store is not {@code TRANSACTIONAL}, per committed transaction: each of those is
 * atomic on this node's disk. A batch larger than one log record ({@link #maxBytes}: an eighth of
 * the store's log region, 8 MiB with the default {@code log-size}) is committed as several
 * WriteBatches in order, each atomic, the batch as a whole not; a larger {@code log-size} keeps
 * larger batches whole.
 *
 * <p><b>Direct mode</b> ({@code direct-mode="true"}; htod refuses WriteBatch there): each
 * segment's writes go to its map in one {@link HtodMap#putAll} (batch allocation; at SYNC one
 * flush and sync per round of distinct buckets), then the removes one by one. When {@link #apply}
 * returns every write and remove is as durable as a single write, but a crash in the middle can
 * leave some of them on disk and others not (each one whole: htod never shows a torn entry).
 */
final class BatchWriter {
    /** What htod's WriteBatch counts for one operation beside its key and value bytes. */
    static final int OP_OVERHEAD = 64;

    /**
     * Writes by segment, key bytes to stored value bytes in arrival order. byte[] keys compare by
     * identity here, so two writes of one key are both kept, in order: the later one wins, in a
     * WriteBatch as in {@link HtodMap#putAll}.
     */
    private final Map<Integer, Map<byte[], byte[]>> writes = new LinkedHashMap<>();
    /** Removes by segment: key bytes. */
    private final Map<Integer, List<byte[]>> removes = new LinkedHashMap<>();

    synchronized void write(int segment, byte[] key, byte[] value) {
        writes.computeIfAbsent(segment, s -> new LinkedHashMap<>()).put(key, value);
    }

    synchronized void remove(int segment, byte[] key) {
        removes.computeIfAbsent(segment, s -> new ArrayList<>()).add(key);
    }

    synchronized boolean isEmpty() {
        return writes.isEmpty() && removes.isEmpty();
    }

    /**
     * Applies the batch: writes first, then removes, as Infinispan's default batch does. Blocks.
     * Returns how many WriteBatches it committed (0 in direct mode), for tests.
     */
    synchronized int apply(SegmentMaps maps) {
        HtodStore store = maps.store();
        if (!store.logged()) {
            applyDirect(maps);
            return 0;
        }
        long max = maxBytes(store);
        int commits = 0;
        WriteBatch b = store.batch();
        try {
            long bytes = 0;
            for (Map.Entry<Integer, Map<byte[], byte[]>> e : writes.entrySet()) {
                HtodMap<byte[], byte[]> m = maps.forWrite(e.getKey());
                for (Map.Entry<byte[], byte[]> w : e.getValue().entrySet()) {
                    long op = OP_OVERHEAD + w.getKey().length + w.getValue().length;
                    if (bytes + op > max && b.size() > 0) {
                        b.commit();
                        commits++;
                        b = store.batch();
                        bytes = 0;
                    }
                    b.put(m, w.getKey(), w.getValue());
                    bytes += op;
                }
            }
            for (Map.Entry<Integer, List<byte[]>> e : removes.entrySet()) {
                HtodMap<byte[], byte[]> m = maps.forRead(e.getKey());
                if (m == null) {
                    continue; // nothing was ever written to this segment: nothing to remove
                }
                for (byte[] k : e.getValue()) {
                    long op = OP_OVERHEAD + k.length;
                    if (bytes + op > max && b.size() > 0) {
                        b.commit();
                        commits++;
                        b = store.batch();
                        bytes = 0;
                    }
                    b.remove(m, k);
                    bytes += op;
                }
            }
            if (b.size() > 0) {
                b.commit();
                commits++;
            }
            return commits;
        } finally {
            b.close();
        }
    }

    /**
     * Most bytes of operations, as WriteBatch counts them, that one WriteBatch of {@code store}
     * takes: one log record. {@link HtodStore#maxValueBytes()} is that record's room less one
     * operation's overhead and the largest key (or htod's value limit, when that is lower: then
     * batches are cut smaller than they need be); 4 more bytes are the record's operation count.
     */
    static long maxBytes(HtodStore store) {
        return store.maxValueBytes() + OP_OVERHEAD + Htod.MAX_KEY_BYTES - 4;
    }

    /**
     * Removes the keys of {@code map} that {@code which} accepts (all of them when null). In log
     * mode in WriteBatches of up to {@link #maxBytes}, each one log record (and one sync at SYNC),
     * where one remove at a time would cost a record and a sync per key; not atomic as a whole. In
     * direct mode {@code clear()} (one swap of the table's bucket array) or one remove per key.
     * Blocks. Returns the keys removed in log mode, -1 in direct mode.
     */
    static long removeAll(HtodStore store, HtodMap<byte[], byte[]> map, Predicate<byte[]> which) {
        if (!store.logged()) {
            if (which == null) {
                map.clear();
            } else {
                map.keySet().removeIf(which);
            }
            return -1;
        }
        long max = maxBytes(store);
        long removed = 0;
        WriteBatch b = store.batch();
        try {
            long bytes = 0;
            for (byte[] k : map.keySet()) {
                if (which != null && !which.test(k)) {
                    continue;
                }
                long op = OP_OVERHEAD + k.length;
                if (bytes + op > max && b.size() > 0) {
                    removed += b.commit();
                    b = store.batch();
                    bytes = 0;
                }
                b.remove(map, k);
                bytes += op;
            }
            if (b.size() > 0) {
                removed += b.commit();
            }
            return removed;
        } finally {
            b.close();
        }
    }

    /** Direct mode: no WriteBatch; per segment one putAll, then the removes. Not atomic across a crash. */
    private void applyDirect(SegmentMaps maps) {
        for (Map.Entry<Integer, Map<byte[], byte[]>> e : writes.entrySet()) {
            maps.forWrite(e.getKey()).putAll(e.getValue());
        }
        for (Map.Entry<Integer, List<byte[]>> e : removes.entrySet()) {
            HtodMap<byte[], byte[]> m = maps.forRead(e.getKey());
            if (m != null) {
                for (byte[] k : e.getValue()) {
                    m.delete(k);
                }
            }
        }
    }
}
