package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What each key of a map under power cuts may hold after a crash: its last acknowledged value,
 * or, for a key written since the model last settled it, any value in its {@code since} set (the
 * acknowledged one at the first such write included). When a key settles is the caller's rule.
 */
class PossibleValues {
    /** Marks an absent key among the values a key may hold. */
    static final String ABSENT = "(absent)";
    final Map<String, String> acked = new HashMap<>();
    /** Per key written since it last settled: what it may hold. */
    final Map<String, Set<String>> since = new HashMap<>();

    /** An operation is about to write {@code v} ({@code null}: remove) to {@code k}. */
    void begin(String k, String v) {
        since.computeIfAbsent(k, x -> {
            Set<String> s = new HashSet<>();
            s.add(acked.getOrDefault(x, ABSENT));
            return s;
        }).add(v == null ? ABSENT : v);
    }

    /** The operation returned with this effect on {@code k}. */
    void acked(String k, String v) {
        if (v == null) {
            acked.remove(k);
        } else {
            acked.put(k, v);
        }
    }

    /** What a failure's message adds about {@code k}: what the model saw happen to it, if it keeps that. */
    String historyOf(String k) {
        return "";
    }

    boolean allows(String k, String found) {
        Set<String> s = since.get(k);
        String f = found == null ? ABSENT : found;
        return s != null ? s.contains(f) : f.equals(acked.getOrDefault(k, ABSENT));
    }

    /**
     * Checks the recovered map {@code m} over keys {@code k0} to {@code k(keys-1)}: each holds a
     * value it may hold, and iteration and size agree with the lookups. {@code context} ends a
     * failure's message.
     */
    void check(HtodMap<String, String> m, int keys, String context) {
        Map<String, String> found = new HashMap<>();
        for (int i = 0; i < keys; i++) {
            String k = "k" + i;
            String v = m.get(k);
            if (!allows(k, v)) {
                throw new AssertionError(k + " holds " + v + ", acknowledged " + acked.get(k)
                        + (since.containsKey(k) ? ", or one of " + since.get(k) : ", and nothing since") + " ("
                        + context + ")" + historyOf(k));
            }
            if (v != null) {
                found.put(k, v);
            }
        }
        assertEquals(found, new HashMap<>(m), "iteration agrees with lookups");
        assertEquals(found.size(), m.size());
    }
}
