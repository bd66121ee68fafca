package org.htod;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A full disk at every write, and at every sync, of each kind of operation, through {@code
 * FaultyDevice}: the disk fills at the n-th write (or sync) and stays full, for n = 1, 2, ... until
 * the operation finishes without meeting it. After each failure:
 *
 * <ol>
 *   <li>the error is a {@link StoreFullException};
 *   <li>the store stays open and readable: every acknowledged entry reads back, the keys of the
 *       failed operation hold their value before or after it, iteration and size agree;
 *   <li>a write while the disk is still full fails with an {@link HtodException}, or succeeds,
 *       and harms nothing;
 *   <li>once space returns, in the same instance, the failed operation and other writes succeed
 *       and read back, and {@code close()} succeeds (after a failed close, closing again does);
 *   <li>the store reopens clean (no recovery needed) with every acknowledged entry, and verifies.
 * </ol>
 *
 * Stores at SYNC and at NONE (whose acknowledged writes wait in memory for a flush, which the
 * operation under test may be the one to make); ASYNC is NONE with a background sync, whose
 * timing would make the fault points vary from run to run.
 */
class FullDiskTest {
    /** Values of several sectors now and then, so that an entry takes more than one block write. */
    private static final String LARGE = "y".repeat(700);

    enum Op { PUT_NEW, PUT_OVER, REPLACE, REMOVE, PUT_ALL, CREATE_MAP, PUT_DOUBLING, SYNC, CLOSE }

    enum At { WRITE, SYNC }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Op op : Op.values()) {
            for (Durability d : new Durability[] {Durability.SYNC, Durability.NONE}) {
                for (At at : At.values()) {
                    out.add(Arguments.of(op, d, at));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} at {1}, the disk full from a {2}")
    @MethodSource("cases")
    void fullDiskAtEveryWriteOfAnOperation(Op op, Durability d, At at) {
        int points = 0;
        for (int n = 1; point(op, d, at, n); n++) {
            points++;
            if (n > 2000) {
                fail(op + " at " + d + " still meets the fault at its " + n + "th " + at);
            }
        }
        System.out.println(op + " at " + d + ": disk full at each of " + points + " " + at + "s");
        if (op == Op.PUT_DOUBLING && at == At.WRITE) {
            // A put writes its entry and at most its link; more means it doubled the table as meant.
            assertTrue(points > 4, "the put doubled the table: " + points + " writes");
        }
    }

    /** What an operation changes in map "m": key to value, null for removed. */
    private static Map<String, String> effect(Op op) {
        Map<String, String> e = new LinkedHashMap<>();
        switch (op) {
            case PUT_NEW -> e.put("new", "new-" + LARGE);
            case PUT_OVER -> e.put("k3", "over");
            case REPLACE -> e.put("k4", "replaced-" + LARGE);
            case REMOVE -> e.put("k5", null);
            case PUT_ALL -> {
                for (int i = 0; i < 5; i++) {
                    e.put("p" + i, "batch" + i);
                    e.put("k" + (10 + i), "batch-over" + i + (i == 0 ? LARGE : ""));
                }
            }
            case PUT_DOUBLING -> e.put("d", "doubling");
            default -> { }
        }
        return e;
    }

    private static void act(Op op, HtodStore store, HtodMap<String, String> m) {
        switch (op) {
            case PUT_NEW, PUT_OVER, PUT_DOUBLING -> effect(op).forEach(m::put);
            case REPLACE -> effect(op).forEach(m::replace);
            case REMOVE -> effect(op).keySet().forEach(m::remove);
            case PUT_ALL -> m.putAll(effect(op));
            case CREATE_MAP -> store.map("other", Codec.string(), Codec.string()).put("o", "other");
            case SYNC -> store.sync();
            case CLOSE -> store.close();
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    private static void apply(Map<String, String> model, String key, String value) {
        if (value == null) {
            model.remove(key);
        } else {
            model.put(key, value);
        }
    }

    /**
     * One store, the disk full from the {@code n}-th write or sync of {@code op}; returns whether
     * the operation met the fault.
     */
    private static boolean point(Op op, Durability d, At at, int n) {
        String where = op + " at " + d + ", disk full from its " + n + "th " + at;
        MemoryDevice mem = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(mem);
        HtodStore store = TestStores.small(dev).durability(d).open();
        HtodMap<String, String> m = store.map("m", Codec.string(), Codec.string());
        Map<String, String> model = new HashMap<>();
        // At NONE five new keys, a removal and a replacement wait in memory for a flush, acknowledged.
        boolean pending = d == Durability.NONE;
        // 64 buckets double past 48 entries: with 48, the next put doubles the table.
        int keys = (op == Op.PUT_DOUBLING ? 48 : 30) - (pending ? 4 : 0);
        for (int i = 0; i < keys; i++) {
            String v = "v" + i + (i % 5 == 0 ? LARGE : "");
            m.put("k" + i, v);
            model.put("k" + i, v);
        }
        store.sync();
        if (pending) {
            m.remove("k6");
            model.remove("k6");
            m.put("k7", "w7");
            model.put("k7", "w7");
            for (int i = 0; i < 5; i++) {
                m.put("u" + i, "u" + i);
                model.put("u" + i, "u" + i);
            }
        }

        if (at == At.WRITE) {
            dev.failWrite(n, FaultyDevice.Fault.DISK_FULL, true);
        } else {
            dev.failSync(n, FaultyDevice.Fault.DISK_FULL, true);
        }
        HtodException thrown = null;
        try {
            act(op, store, m);
        } catch (HtodException e) {
            thrown = e;
        }
        boolean met = dev.faultsRaised() > 0;
        if (!met) {
            assertNull(thrown, where + ": the operation met no fault, yet failed");
            effect(op).forEach((k, v) -> apply(model, k, op == Op.REPLACE && !model.containsKey(k) ? null : v));
            dev.heal();
            if (op != Op.CLOSE) {
                store.close();
            }
            reopen(op, mem, model, where);
            return false;
        }
        if (thrown != null) {
            HtodException e = thrown;
            assertInstanceOf(StoreFullException.class, e, () -> where + ": the error of a full disk, found " + e);
        } else {
            effect(op).forEach((k, v) -> apply(model, k, v)); // it returned: acknowledged
        }

        if (op != Op.CLOSE) {
            // The keys of a failed operation may hold their value before or after it, until written again.
            Map<String, Set<String>> uncertain = new HashMap<>();
            if (thrown != null) {
                effect(op).forEach((k, v) -> uncertain.put(k, allowed(model.get(k), v)));
            }
            String full = where + ": while the disk is full";
            checkReads(m, model, uncertain, full + ", every acknowledged entry reads back");
            try {
                m.put("while-full", "x");
                model.put("while-full", "x");
            } catch (HtodException e) {
                uncertain.put("while-full", allowed(null, "x"));
            }
            checkReads(m, model, uncertain, full + ", after a write was tried");
        }

        dev.heal(); // space returns
        if (op == Op.CLOSE) {
            assertDoesNotThrow(store::close, where + ": once space returns, closing again closes");
        } else {
            assertDoesNotThrow(() -> {
                act(op, store, m);
                m.put("after", "a");
                m.put("k1", "k1-after");
                m.remove("k2");
                m.put("while-full", "y");
            }, where + ": once space returns, writes succeed in the same instance");
            effect(op).forEach((k, v) -> apply(model, k, op == Op.REPLACE && !model.containsKey(k) ? null : v));
            model.put("after", "a");
            model.put("k1", "k1-after");
            model.remove("k2");
            model.put("while-full", "y");
            checkReads(m, model, where + ": once space returned");
            assertDoesNotThrow(store::close, where + ": close() after the error");
        }
        reopen(op, mem, model, where);
        return true;
    }

    private static void reopen(Op op, MemoryDevice mem, Map<String, String> model, String where) {
        try (HtodStore again = TestStores.small(mem.reopen()).open()) {
            assertTrue(again.recoveryReport().clean(), where + ": the store reopens clean: " + again.recoveryReport());
            checkReads(again.map("m", Codec.string(), Codec.string()), model, where + ": after a reopen");
            if (op == Op.CREATE_MAP) {
                assertEquals("other", again.map("other", Codec.string(), Codec.string()).get("o"), where);
            }
            VerifyReport v = again.verify();
            assertTrue(v.ok(), where + ": after a reopen the store verifies: " + v);
        }
    }

    private static String read(HtodMap<String, String> m, String key, String where) {
        return assertDoesNotThrow(() -> m.get(key), where + ": the store stays readable");
    }

    private static Set<String> allowed(String before, String after) {
        Set<String> s = new HashSet<>();
        s.add(before);
        s.add(after);
        return s;
    }

    private static void checkReads(HtodMap<String, String> m, Map<String, String> model, String where) {
        checkReads(m, model, Map.of(), where);
    }

    /** Every key of {@code model} reads back, each of {@code uncertain} one of its values; iteration and size agree. */
    private static void checkReads(HtodMap<String, String> m, Map<String, String> model,
            Map<String, Set<String>> uncertain, String where) {
        Map<String, String> expected = new HashMap<>(model);
        for (Map.Entry<String, Set<String>> e : uncertain.entrySet()) {
            String found = read(m, e.getKey(), where);
            assertTrue(e.getValue().contains(found), where + ": " + e.getKey() + " of the failed operation holds "
                    + found + ", expected one of " + e.getValue());
            apply(expected, e.getKey(), found);
        }
        for (Map.Entry<String, String> e : model.entrySet()) {
            if (!uncertain.containsKey(e.getKey())) {
                assertEquals(e.getValue(), read(m, e.getKey(), where), where + ": " + e.getKey());
            }
        }
        assertEquals(expected, assertDoesNotThrow(() -> new HashMap<>(m), where + ": iteration"), where + ": iteration");
        assertEquals(expected.size(), m.size(), where + ": size");
    }
}
