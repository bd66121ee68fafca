package org.htod.infinispan;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.htod.HtodMap;

/**
 * The writes and removes of one {@code NonBlockingStore.batch} call, grouped by segment, and the
 * one place that applies them to htod.
 *
 * <p><b>What holds today.</b> Each segment's writes go to its map in one {@link HtodMap#putAll}
 * (batch allocation; at durability SYNC one flush and sync per round of distinct buckets), then the
 * removes one by one (each synced at SYNC). When {@link #apply} returns, every write and remove of
 * the batch is as durable as a single write at the configured durability. The batch is
 * <em>not</em> atomic across a crash: a crash in the middle of {@code apply} can leave some of its
 * writes and removes on disk and others not (each one whole: htod never shows a torn entry).
 *
 * <p><b>Where WriteBatch goes.</b> When htod's {@code WriteBatch} lands, {@link #apply} becomes
 * <pre>{@code
 * try (WriteBatch b = maps.store().batch()) {
 *     for each segment: b.put(maps.forWrite(segment), key, value) ...; b.remove(map, key) ...;
 *     b.commit();
 * }
 * }</pre>
 * and the batch is all or none across a crash, over every segment, with one sync. Nothing else in
 * this module changes.
 */
final class BatchWriter {
    /**
     * Writes by segment, key bytes to stored value bytes in arrival order. byte[] keys compare by
     * identity here, so two writes of one key are both kept; {@link HtodMap#putAll} lets the later
     * one win, as it compares keys by content.
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

    /** Applies the batch: writes first, then removes, as Infinispan's default batch does. Blocks. */
    synchronized void apply(SegmentMaps maps) {
        // ---- the WriteBatch slot: see the class comment ----
        for (Map.Entry<Integer, Map<byte[], byte[]>> e : writes.entrySet()) {
            maps.forWrite(e.getKey()).putAll(e.getValue());
        }
        for (Map.Entry<Integer, List<byte[]>> e : removes.entrySet()) {
            HtodMap<byte[], byte[]> m = maps.forRead(e.getKey());
            if (m != null) {
                for (byte[] k : e.getValue()) {
                    m.remove(k);
                }
            }
        }
        // ---- end of the WriteBatch slot ----
    }
}
