package org.htod.integrity;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.htod.Durability;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.htod.integrity.Verdict.Wrong;

/**
 * Opens a store image and asks it everything its truth knows: the map names, and for every map
 * its size, every key by {@code get} and {@code containsKey}, keys it must not hold, its key set,
 * values and entry set, then a {@code putIfAbsent} of a key it holds. Each answer must be the
 * truth's or a typed error ({@link HtodException}); anything else is recorded in the {@link
 * Verdict}. A refused open must leave the image as it was.
 */
final class StoreCheck {
    private StoreCheck() {}

    /** A step of the check; a typed error ends the step, not the check. */
    @FunctionalInterface
    private interface Step {
        void run();
    }

    static Verdict run(byte[] image, Model truth, long cacheBytes, Verdict v) {
        return run(Images.device(image), image, truth, cacheBytes, v);
    }

    /** {@link #run(byte[], Model, long, Verdict)} on {@code dev}, which holds {@code image}; the caller may read it after. */
    static Verdict run(MemoryDevice dev, byte[] image, Model truth, long cacheBytes, Verdict v) {
        HtodStore s;
        try {
            s = Images.builder(dev).cacheSize(cacheBytes).durability(Durability.NONE).open();
        } catch (HtodException e) {
            v.refusal = e.toString();
            byte[] after = Images.bytes(dev.reopen());
            if (!Arrays.equals(after, image)) {
                v.refusedWrote = firstDifference(image, after);
            }
            return v;
        } catch (Throwable t) {
            guard(v);
            v.other("open", t);
            return v;
        }
        return read(s, truth, v);
    }

    /** Asks the open store {@code s} everything {@code truth} knows, then closes it. */
    static Verdict read(HtodStore s, Model truth, Verdict v) {
        try {
            step(v, "mapNames", () -> names(s.mapNames(), truth, v));
            for (Model.MapModel<?, ?> m : truth.maps) {
                check(s, m, v);
            }
            for (Model.MapModel<?, ?> m : truth.maps) {
                putIfAbsent(s, m, v);
            }
        } finally {
            step(v, "close", s::close);
        }
        return v;
    }

    private static void step(Verdict v, String what, Step body) {
        guard(v);
        try {
            body.run();
        } catch (HtodException e) {
            v.typed(what, e);
        } catch (Throwable t) {
            guard(v);
            v.other(what, t);
        }
    }

    /** A case out of time stops here rather than read on. */
    private static void guard(Verdict v) {
        if (v.abandoned) {
            throw new IllegalStateException("case abandoned after its time ran out");
        }
    }

    private static void names(List<String> found, Model truth, Verdict v) {
        List<String> f = new ArrayList<>(found);
        List<String> t = truth.names();
        Collections.sort(f);
        Collections.sort(t);
        if (!f.equals(t)) {
            v.wrong(Wrong.NAMES, "mapNames() " + f + ", expected " + t);
        }
    }

    private static <K, V> void check(HtodStore s, Model.MapModel<K, V> m, Verdict v) {
        List<HtodMap<K, V>> got = new ArrayList<>(1);
        step(v, m.name + ": map(name)", () -> got.add(s.map(m.name, m.keys, m.values)));
        if (got.isEmpty()) {
            return;
        }
        HtodMap<K, V> map = got.get(0);
        long[] size = {-1};
        step(v, m.name + ": size", () -> {
            size[0] = map.size();
            if (size[0] != m.entries.size()) {
                v.wrong(Wrong.SIZE, m.name + ": size() " + size[0] + ", holds " + m.entries.size());
            }
        });
        for (Map.Entry<ByteBuffer, ByteBuffer> e : m.entries.entrySet()) {
            K key = m.key(e.getKey());
            String who = m.name + " key " + Model.show(e.getKey());
            step(v, who + ": get", () -> {
                V value = map.get(key);
                if (value == null) {
                    v.wrong(Wrong.GET_ABSENT, who + ": get() null");
                } else if (!m.valueBytes(value).equals(e.getValue())) {
                    v.wrong(Wrong.GET_VALUE, who + ": get() " + m.valueBytes(value).remaining() + " bytes, expected "
                            + e.getValue().remaining());
                }
            });
            step(v, who + ": containsKey", () -> {
                if (!map.containsKey(key)) {
                    v.wrong(Wrong.CONTAINS_FALSE, who + ": containsKey() false");
                }
            });
        }
        for (ByteBuffer p : m.probes) {
            K key = m.key(p);
            String who = m.name + " absent key " + Model.show(p);
            step(v, who + ": get", () -> {
                if (map.get(key) != null || map.containsKey(key)) {
                    v.wrong(Wrong.PHANTOM, who + ": found");
                }
            });
        }
        step(v, m.name + ": keySet", () -> {
            List<ByteBuffer> keys = new ArrayList<>();
            for (K k : map.keySet()) {
                keys.add(m.keyBytes(k));
            }
            compareKeys(m, keys, size[0], "keySet", v);
        });
        step(v, m.name + ": values", () -> {
            Map<ByteBuffer, Integer> want = new HashMap<>();
            m.entries.values().forEach(x -> want.merge(x, 1, Integer::sum));
            int n = 0;
            for (V x : map.values()) {
                n++;
                if (want.merge(m.valueBytes(x), -1, Integer::sum) < 0) {
                    v.wrong(Wrong.ITER_VALUE, m.name + ": values() returns a value of " + m.valueBytes(x).remaining()
                            + " bytes the map does not hold (that often)");
                }
            }
            if (n < m.entries.size()) {
                v.wrong(Wrong.ITER_MISSING, m.name + ": values() returns " + n + " values of " + m.entries.size());
            }
        });
        step(v, m.name + ": entrySet", () -> {
            List<ByteBuffer> keys = new ArrayList<>();
            for (Map.Entry<K, V> e : map.entrySet()) {
                ByteBuffer k = m.keyBytes(e.getKey());
                keys.add(k);
                ByteBuffer want = m.entries.get(k);
                if (want != null && !want.equals(m.valueBytes(e.getValue()))) {
                    v.wrong(Wrong.ITER_VALUE, m.name + " key " + Model.show(k) + ": entrySet() value of "
                            + m.valueBytes(e.getValue()).remaining() + " bytes, expected " + want.remaining());
                }
            }
            compareKeys(m, keys, size[0], "entrySet", v);
        });
    }

    private static void compareKeys(Model.MapModel<?, ?> m, List<ByteBuffer> keys, long size, String view, Verdict v) {
        Set<ByteBuffer> seen = new HashSet<>();
        for (ByteBuffer k : keys) {
            if (!seen.add(k)) {
                v.wrong(Wrong.ITER_EXTRA, m.name + ": " + view + "() returns " + Model.show(k) + " twice");
            } else if (!m.entries.containsKey(k)) {
                v.wrong(Wrong.ITER_EXTRA, m.name + ": " + view + "() returns " + Model.show(k) + ", not in the map");
            }
        }
        for (ByteBuffer k : m.entries.keySet()) {
            if (!seen.contains(k)) {
                v.wrong(Wrong.ITER_MISSING, m.name + ": " + view + "() lacks " + Model.show(k) + " (" + keys.size()
                        + " of " + m.entries.size() + " returned)");
                break;
            }
        }
        if (size >= 0 && size != keys.size()) {
            v.wrong(Wrong.SIZE_VS_ITERATION, m.name + ": size() " + size + ", " + view + "() returns " + keys.size());
        }
    }

    private static <K, V> void putIfAbsent(HtodStore s, Model.MapModel<K, V> m, Verdict v) {
        if (m.entries.isEmpty()) {
            return;
        }
        List<ByteBuffer> keys = new ArrayList<>(m.entries.keySet());
        ByteBuffer k = keys.get(keys.size() / 2);
        ByteBuffer other = m.entries.get(keys.get(0));
        String who = m.name + " key " + Model.show(k);
        step(v, who + ": putIfAbsent", () -> {
            V old = s.map(m.name, m.keys, m.values).putIfAbsent(m.key(k), m.value(other));
            if (old == null) {
                v.wrong(Wrong.PUT_IF_ABSENT, who + ": putIfAbsent() inserted a key the map holds");
            } else if (!m.valueBytes(old).equals(m.entries.get(k))) {
                v.wrong(Wrong.PUT_IF_ABSENT, who + ": putIfAbsent() returned another value");
            }
        });
    }

    static String firstDifference(byte[] before, byte[] after) {
        if (before.length != after.length) {
            return "length " + before.length + " -> " + after.length;
        }
        for (int i = 0; i < before.length; i++) {
            if (before[i] != after[i]) {
                return "byte at offset " + i + " changed";
            }
        }
        return "nothing";
    }
}
