package org.htod.integrity;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.Codec;
import org.htod.HtodMap;
import org.htod.HtodStore;

/**
 * The writes that make a fuzz store, mirrored in a {@link Tracker}: five maps of about 400 entries
 * together, with what damage should meet. {@code pages} (text) doubles three times and has keys
 * from 2 bytes to 1.5 KB; {@code blobs} holds values of 5 to 20 KiB, three of them under keys of
 * more than 4 KiB (entries larger than the first read of a chain, so keys are read apart from
 * values); {@code counts} has 8-byte keys and 4-byte values (codecs that reject other lengths),
 * half with a time to live; {@code longs} has 8-byte keys under values over 4 KiB (keys read apart
 * from values, by a codec that rejects other lengths); {@code empty} was filled and cleared. Replacements, removals, a batch
 * and compute leave versions above 1, free blocks and reused ones behind.
 */
final class Workload {
    final Tracker tracker = new Tracker();
    final Model.MapModel<String, String> pages = tracker.add(new Model.MapModel<>("pages", Codec.string(), Codec.string()));
    final Model.MapModel<byte[], byte[]> blobs = tracker.add(new Model.MapModel<>("blobs", Codec.bytes(), Codec.bytes()));
    final Model.MapModel<Long, Integer> counts = tracker.add(new Model.MapModel<>("counts", Codec.longs(), Codec.ints()));
    final Model.MapModel<String, String> empty = tracker.add(new Model.MapModel<>("empty", Codec.string(), Codec.string()));
    final Model.MapModel<Long, byte[]> longs = tracker.add(new Model.MapModel<>("longs", Codec.longs(), Codec.bytes()));
    /** Every key ever written, per map: those absent at the end are probes. */
    private final Map<String, Set<ByteBuffer>> ever = new HashMap<>();
    private final SplittableRandom r;
    private int nextPage;
    private int nextBlob;
    private HtodMap<String, String> pm;
    private HtodMap<byte[], byte[]> bm;
    private HtodMap<Long, Integer> cm;
    private HtodMap<Long, byte[]> lm;

    Workload(long seed) {
        this.r = new SplittableRandom(seed);
    }

    void bind(HtodStore s) {
        pm = s.map(pages.name, pages.keys, pages.values);
        bm = s.map(blobs.name, blobs.keys, blobs.values);
        cm = s.map(counts.name, counts.keys, counts.values);
        lm = s.map(longs.name, longs.keys, longs.values);
    }

    /** The first state of every fuzz store; the caller syncs after it. */
    void populate(HtodStore s) {
        bind(s);
        HtodMap<String, String> em = s.map(empty.name, empty.keys, empty.values);
        for (int i = 0; i < 5; i++) {
            em.put("gone" + i, "x");
        }
        em.clear();
        ever.computeIfAbsent(empty.name, n -> new LinkedHashSet<>()).add(pages.keyBytes("gone0"));
        for (int i = 0; i < 240; i++) {
            putPage(newPageKey());
        }
        Map<String, String> batch = new HashMap<>();
        for (int i = 0; i < 20; i++) {
            String k = newPageKey();
            String v = text(r.nextInt(300));
            batch.put(k, v);
            note(pages, pages.keyBytes(k));
            tracker.put(pages, pages.keyBytes(k), pages.valueBytes(v));
        }
        pm.putAll(batch);
        for (int i = 0; i < 24; i++) {
            putBlob(newBlobKey(i % 8 == 5));
        }
        for (long i = 0; i < 100; i++) {
            putCount(0x434E_5400_0000_0000L + i * 7919, r.nextInt(), i % 2 == 0);
        }
        for (long i = 0; i < 16; i++) {
            long k = 0x4C4F_4E47_0000_0000L + i * 31;
            byte[] v = new byte[4500 + r.nextInt(4000)];
            r.nextBytes(v);
            note(longs, longs.keyBytes(k));
            tracker.put(longs, longs.keyBytes(k), Model.wrap(v));
            lm.put(k, v);
        }
        for (int i = 0; i < 80; i++) {
            step();
        }
    }

    /** One random operation on the filled store: a new page, a replacement, a removal, a blob, a count. */
    void step() {
        int dice = r.nextInt(100);
        if (dice < 30) {
            putPage(newPageKey());
        } else if (dice < 55) {
            putPage(any(pages));
        } else if (dice < 70) {
            ByteBuffer k = any(pages);
            tracker.remove(pages, k);
            pm.remove(pages.key(k));
        } else if (dice < 75) {
            String k = pages.key(any(pages));
            String v = text(r.nextInt(50));
            ByteBuffer cur = pages.entries.get(pages.keyBytes(k));
            tracker.put(pages, pages.keyBytes(k), pages.valueBytes(pages.value(cur) + v));
            pm.compute(k, (key, old) -> old + v);
        } else if (dice < 85) {
            putBlob(r.nextInt(3) == 0 ? newBlobKey(false) : any(blobs));
        } else if (dice < 90 && blobs.entries.size() > 10) {
            ByteBuffer k = any(blobs);
            tracker.remove(blobs, k);
            bm.remove(blobs.key(k));
        } else {
            ByteBuffer k = any(counts);
            putCount(counts.key(k), r.nextInt(), r.nextBoolean());
        }
    }

    private String newPageKey() {
        int i = nextPage++;
        if (i < 4) {
            return "q" + i;
        }
        int len = i % 50 == 7 ? 200 + r.nextInt(1300) : r.nextInt(40);
        return "page/" + i + "/" + text(len);
    }

    private ByteBuffer newBlobKey(boolean large) {
        int len = large ? 4097 + r.nextInt(1900) : 8 + r.nextInt(56);
        byte[] k = new byte[len];
        r.nextBytes(k);
        byte[] tag = ("BLOB" + nextBlob++ + "/").getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(tag, 0, k, 0, tag.length);
        return Model.wrap(k);
    }

    private void putPage(Object key) {
        String k = key instanceof String ? (String) key : pages.key((ByteBuffer) key);
        String v = text(r.nextInt(8) == 0 ? 600 + r.nextInt(3000) : r.nextInt(200));
        note(pages, pages.keyBytes(k));
        tracker.put(pages, pages.keyBytes(k), pages.valueBytes(v));
        pm.put(k, v);
    }

    private void putBlob(ByteBuffer k) {
        byte[] v = new byte[5 * 1024 + r.nextInt(15 * 1024)];
        r.nextBytes(v);
        note(blobs, k);
        tracker.put(blobs, k, Model.wrap(v));
        bm.put(Model.bytes(k), v);
    }

    private void putCount(long k, int v, boolean ttl) {
        note(counts, counts.keyBytes(k));
        tracker.put(counts, counts.keyBytes(k), counts.valueBytes(v));
        if (ttl) {
            cm.put(k, v, Duration.ofHours(1 + r.nextInt(48)));
        } else {
            cm.put(k, v);
        }
    }

    private void note(Model.MapModel<?, ?> m, ByteBuffer k) {
        ever.computeIfAbsent(m.name, n -> new LinkedHashSet<>()).add(k);
    }

    private ByteBuffer any(Model.MapModel<?, ?> m) {
        List<ByteBuffer> keys = new ArrayList<>(m.entries.keySet());
        return keys.get(r.nextInt(keys.size()));
    }

    private String text(int len) {
        StringBuilder b = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            b.append((char) ('a' + r.nextInt(26)));
        }
        return b.toString();
    }

    /** Adds to each map of {@code truth} the keys written at some time that it does not hold, as probes. */
    void addProbes(Model truth) {
        for (Model.MapModel<?, ?> m : truth.maps) {
            for (ByteBuffer k : ever.getOrDefault(m.name, Set.of())) {
                if (!m.entries.containsKey(k)) {
                    m.probes.add(k);
                }
            }
        }
    }
}
