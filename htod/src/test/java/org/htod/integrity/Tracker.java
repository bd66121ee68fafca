package org.htod.integrity;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The model of a store while a workload writes it: the state every operation so far intends, and,
 * for each key written since the last durable point, every state a crash may leave it in (its
 * state at that point, and each value written since; {@link #ABSENT} for a removal).
 */
final class Tracker {
    static final Object ABSENT = new Object() {
        @Override
        public String toString() {
            return "(absent)";
        }
    };

    final Model model = new Model();
    private final Map<String, Map<ByteBuffer, Set<Object>>> possible = new HashMap<>();

    <K, V> Model.MapModel<K, V> add(Model.MapModel<K, V> m) {
        model.maps.add(m);
        return m;
    }

    /** Records a put about to be made (call before the operation, so that a crash in it is covered). */
    void put(Model.MapModel<?, ?> m, ByteBuffer k, ByteBuffer v) {
        touch(m, k).add(v);
        m.entries.put(k, v);
    }

    void remove(Model.MapModel<?, ?> m, ByteBuffer k) {
        touch(m, k).add(ABSENT);
        m.entries.remove(k);
    }

    private Set<Object> touch(Model.MapModel<?, ?> m, ByteBuffer k) {
        Map<ByteBuffer, Set<Object>> p = possible.computeIfAbsent(m.name, n -> new HashMap<>());
        return p.computeIfAbsent(k, x -> {
            Set<Object> s = new HashSet<>();
            ByteBuffer cur = m.entries.get(k);
            s.add(cur == null ? ABSENT : cur);
            return s;
        });
    }

    private static String show(Object state) {
        return state instanceof ByteBuffer ? Model.show((ByteBuffer) state) : String.valueOf(state);
    }

    /** Everything so far is durable: a crash from now on leaves at least this state. */
    void durable() {
        possible.clear();
    }

    /**
     * Checks that {@code found}, read from a store a crash left, is a state the writes allow: each
     * key as intended, or, if written since the last durable point, in one of its possible states.
     * Returns null if so, else what is wrong.
     */
    String explain(Model found) {
        for (Model.MapModel<?, ?> m : model.maps) {
            Model.MapModel<?, ?> f = found.map(m.name);
            if (f == null) {
                return "map " + m.name + " is missing";
            }
            Set<ByteBuffer> keys = new HashSet<>(m.entries.keySet());
            keys.addAll(f.entries.keySet());
            Map<ByteBuffer, Set<Object>> p = possible.getOrDefault(m.name, Map.of());
            keys.addAll(p.keySet());
            for (ByteBuffer k : keys) {
                Object state = f.entries.containsKey(k) ? f.entries.get(k) : ABSENT;
                Set<Object> allowed = p.get(k);
                if (allowed == null) {
                    Object intended = m.entries.containsKey(k) ? m.entries.get(k) : ABSENT;
                    if (!Objects.equals(state, intended)) {
                        return "map " + m.name + " key " + Model.show(k) + ": found " + show(state) + ", intended "
                                + show(intended);
                    }
                } else if (!allowed.contains(state)) {
                    List<String> a = new ArrayList<>();
                    allowed.forEach(x -> a.add(show(x)));
                    return "map " + m.name + " key " + Model.show(k) + ": found " + show(state) + ", allowed " + a;
                }
            }
        }
        return null;
    }
}
