package org.htod.infinispan;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.htod.Codec;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.infinispan.commons.CacheConfigurationException;
import org.infinispan.commons.util.IntSet;

/**
 * The maps of one cache's store: one htod map per Infinispan segment ({@code segment-<n>}), or
 * one for all ({@code all-segments}) when the store is configured non-segmented. A map is created
 * on the first write to its segment, so that a node never pays for segments it never holds.
 *
 * <p>A map per segment, rather than a segment prefix on each key: a segment's size is its map's
 * count (O(1)), iterating a segment reads that segment only, and dropping a segment is one
 * table swap ({@link HtodMap#clear()}) instead of a scan of every entry.
 *
 * <p>The store records its shape in the map {@code infinispan-layout}: layout version, whether it
 * is segmented, and the segment count. Opening it with another shape is refused, since every key
 * would be looked for in the wrong map.
 */
final class SegmentMaps {
    static final String LAYOUT_MAP = "infinispan-layout";
    static final String ALL_SEGMENTS = "all-segments";
    private static final byte[] LAYOUT_KEY = "layout".getBytes(StandardCharsets.UTF_8);
    private static final byte LAYOUT_VERSION = EntryLayout.VERSION;

    private final HtodStore store;
    private final String where;
    private final boolean segmented;
    private final int segmentCount;
    /** Index by segment (or 0 when non-segmented); null until its map exists. */
    private final AtomicReferenceArray<HtodMap<byte[], byte[]>> maps;

    private SegmentMaps(HtodStore store, String where, boolean segmented, int segmentCount) {
        this.store = store;
        this.where = where;
        this.segmented = segmented;
        this.segmentCount = segmentCount;
        this.maps = new AtomicReferenceArray<>(segmented ? segmentCount : 1);
    }

    /** Opens the maps of {@code store}, recording its shape if it is new and checking it otherwise. Blocks. */
    static SegmentMaps open(HtodStore store, String where, boolean segmented, int segmentCount) {
        SegmentMaps m = new SegmentMaps(store, where, segmented, segmentCount);
        m.checkLayout();
        List<String> names = store.mapNames();
        for (int i = 0; i < m.maps.length(); i++) {
            String name = m.name(i);
            if (names.contains(name)) {
                m.maps.set(i, store.map(name, Codec.bytes(), Codec.bytes()));
            }
        }
        return m;
    }

    private void checkLayout() {
        HtodMap<byte[], byte[]> layout = store.map(LAYOUT_MAP, Codec.bytes(), Codec.bytes());
        byte[] want = ByteBuffer.allocate(6).put(LAYOUT_VERSION).put((byte) (segmented ? 1 : 0)).putInt(segmentCount)
                .array();
        byte[] have = layout.putIfAbsent(LAYOUT_KEY, want);
        if (have == null) {
            return;
        }
        if (have.length != 6 || have[0] != LAYOUT_VERSION) {
            throw new EntryFormatException(where + ": expected layout record version " + LAYOUT_VERSION
                    + " (6 bytes) in map " + LAYOUT_MAP + ", found " + have.length + " bytes starting with "
                    + (have.length > 0 ? have[0] : "nothing"));
        }
        boolean wasSegmented = have[1] != 0;
        int wasCount = ByteBuffer.wrap(have).getInt(2);
        if (wasSegmented != segmented || (segmented && wasCount != segmentCount)) {
            throw new CacheConfigurationException(where + " was written " + shape(wasSegmented, wasCount)
                    + "; the cache now asks for " + shape(segmented, segmentCount)
                    + ": use the old setting, or another location");
        }
    }

    private static String shape(boolean segmented, int count) {
        return segmented ? "segmented, with " + count + " segments" : "non-segmented";
    }

    private String name(int index) {
        return segmented ? "segment-" + index : ALL_SEGMENTS;
    }

    private int index(int segment) {
        if (!segmented) {
            return 0; // a non-segmented store may be handed any segment number, even an invalid one
        }
        if (segment < 0 || segment >= segmentCount) {
            throw new IllegalArgumentException(where + ": segment " + segment + " is not between 0 and "
                    + (segmentCount - 1));
        }
        return segment;
    }

    boolean segmented() {
        return segmented;
    }

    /** The map of {@code segment}, or null if nothing was ever written to it. */
    HtodMap<byte[], byte[]> forRead(int segment) {
        return maps.get(index(segment));
    }

    /** The map of {@code segment}, created if it does not exist yet (which blocks, and syncs). */
    HtodMap<byte[], byte[]> forWrite(int segment) {
        int i = index(segment);
        HtodMap<byte[], byte[]> m = maps.get(i);
        if (m != null) {
            return m;
        }
        // store.map is idempotent and thread-safe: racing writers get views of one table.
        maps.compareAndSet(i, null, store.map(name(i), Codec.bytes(), Codec.bytes()));
        return maps.get(i);
    }

    /** The existing maps of {@code segments} (all of them for a non-segmented store, or when null). */
    List<HtodMap<byte[], byte[]>> existing(IntSet segments) {
        List<HtodMap<byte[], byte[]>> out = new ArrayList<>();
        if (!segmented || segments == null) {
            for (int i = 0; i < maps.length(); i++) {
                HtodMap<byte[], byte[]> m = maps.get(i);
                if (m != null) {
                    out.add(m);
                }
            }
            return out;
        }
        segments.forEach((int s) -> {
            HtodMap<byte[], byte[]> m = forRead(s);
            if (m != null) {
                out.add(m);
            }
        });
        return out;
    }

    /** Entries in the maps of {@code segments}, expired ones included; O(segments), no I/O. */
    long count(IntSet segments) {
        long n = 0;
        for (HtodMap<byte[], byte[]> m : existing(segments)) {
            n += m.longSize();
        }
        return n;
    }

    HtodStore store() {
        return store;
    }
}
