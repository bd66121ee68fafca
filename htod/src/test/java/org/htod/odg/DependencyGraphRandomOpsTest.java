package org.htod.odg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.core.HtodException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Random graph operations checked one by one against an in-memory model (a map from node to what
 * it uses), with the store closed and reopened, or abandoned after a sync and recovered, from time
 * to time. Operations lean towards a hidden order so that most edges are accepted, and towards a
 * few hubs so that edge sets grow past {@link DependencyGraph#INLINE_EDGES} and back. After each
 * reopen and at the end, the whole graph is compared with the model: both edge directions, the
 * counts, levels rising along every edge, and {@code affected} of random sets (the reachable set,
 * in an order where every node comes after what it uses). Even seeds run in log mode (every unit
 * one atomic batch), odd seeds in direct mode, where power is also cut part-way through an
 * operation now and then, and the graph read back and repaired becomes the model. A failure names its seed; {@code -Dodg.seed=N}
 * replays one.
 */
class DependencyGraphRandomOpsTest {
    private static final int SEEDS = 12;

    @Test
    void randomOperationsMatchAModel() {
        Long only = Long.getLong("odg.seed");
        int ops = 3_000 * Integer.getInteger("htod.test.scale", 1);
        if (only != null) {
            run(only, ops);
            return;
        }
        for (int i = 0; i < SEEDS; i++) {
            run(0x0d90000L + i, ops);
        }
        assertTrue(refused > 0, "no edge was refused: cycle refusal went untested");
        assertTrue(cuts > 0, "no operation was cut: the repair after a crash went untested");
        assertTrue(spilled > 0, "no edge set grew past " + DependencyGraph.INLINE_EDGES + ": the buckets went untested");
    }

    /** The model: node to the nodes it uses. */
    private final Map<String, Set<String>> uses = new HashMap<>();
    private long refused;
    /** Operations cut by a power cut, in direct mode. */
    private long cuts;
    /** Checks that found edge sets kept in buckets of the edges map. */
    private long spilled;

    private void run(long seed, int ops) {
        uses.clear();
        SplittableRandom r = new SplittableRandom(seed);
        int space = new int[] {12, 80, 300}[r.nextInt(3)];
        boolean direct = (seed & 1) != 0;
        MemoryDevice dev = new MemoryDevice();
        HtodStore store = open(dev, direct, seed);
        DependencyGraph g = DependencyGraph.open(store, "g");
        int op = 0;
        try {
            for (op = 0; op < ops; op++) {
                if (r.nextInt(600) == 0) {
                    if (r.nextBoolean()) {
                        store.close();
                    } else {
                        store.sync(); // then abandoned, as if the process died; recovery runs on open
                        abandon(store, dev);
                    }
                    dev = dev.reopen();
                    store = open(dev, direct, seed);
                    g = DependencyGraph.open(store, "g");
                    compareAll(g, r);
                    continue;
                }
                if (direct && r.nextInt(300) == 0) {
                    // Power cut part-way through the next operation (its commit, the marker's
                    // writes and syncs included): any subset of its unsynced writes survives. The
                    // reopened graph, repaired, becomes the model, and must be whole: both halves
                    // of every edge, levels rising, exact counts; the later operations then check
                    // that its cycle check sees every edge.
                    store.close();
                    MemoryDevice disk = dev.reopen();
                    CrashDevice crash = new CrashDevice(disk);
                    HtodStore cut = open(crash, true, seed);
                    DependencyGraph gc = DependencyGraph.open(cut, "g");
                    crash.armPowerCut(1 + r.nextInt(60), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
                    try {
                        step(gc, r, space);
                    } catch (RuntimeException e) {
                        if (!crash.powerCut()) {
                            throw e;
                        }
                    }
                    boolean wasCut = crash.powerCut();
                    crash.crash(r.nextLong(), false);
                    try {
                        cut.close();
                    } catch (RuntimeException expected) {
                        // the device is gone
                    }
                    dev = disk.reopen();
                    store = open(dev, direct, seed);
                    g = DependencyGraph.open(store, "g");
                    Map<String, Set<String>> found = readBack(g);
                    if (!wasCut) {
                        assertEquals(uses, found, "the graph after an acknowledged operation and a crash");
                    }
                    uses.clear();
                    uses.putAll(found);
                    cuts++;
                    compareAll(g, r);
                    continue;
                }
                step(g, r, space);
            }
            compareAll(g, r);
            store.close();
        } catch (Throwable e) {
            throw new AssertionError("seed=" + seed + " (replay with -Dodg.seed=" + seed + ") op=" + op + " space=" + space
                    + " " + (direct ? "direct" : "log") + " mode: " + e, e);
        }
    }

    /** The graph as stored: every node and what it uses. */
    private static Map<String, Set<String>> readBack(DependencyGraph g) {
        Map<String, Set<String>> out = new HashMap<>();
        for (String n : g.nodesMap().keySet()) {
            if (!n.startsWith("\0")) {
                out.put(n, g.dependencies(n));
            }
        }
        return out;
    }

    private static HtodStore open(BlockDevice dev, boolean direct, long seed) {
        return LayerAccess.hashKeySeed(Htod.builder(dev), seed).grain(64).directMode(direct).logSize(direct ? 0 : 1 << 20).durability(Durability.NONE)
                .open();
    }

    /**
     * The process dies: its device is gone first, so that nothing more of the store reaches the
     * bytes (log mode's flusher included); closing the store then only stops its threads, and fails.
     */
    private static void abandon(HtodStore store, MemoryDevice dev) {
        dev.close();
        try {
            store.close();
        } catch (HtodException expected) {
            // the device is gone
        }
    }

    private static String name(int i) {
        return "/n" + i;
    }

    /** A pair that mostly goes up a hidden order (accepted), sometimes not (maybe a cycle). */
    private static String[] pair(SplittableRandom r, int space) {
        int a = r.nextInt(4) == 0 ? r.nextInt(Math.min(space, 6)) : r.nextInt(space); // hubs: the first few
        int b = r.nextInt(space);
        if (r.nextInt(10) < 8 && a > b) {
            int t = a;
            a = b;
            b = t;
        }
        return new String[] {name(a), name(b)};
    }

    private void step(DependencyGraph g, SplittableRandom r, int space) {
        int k = r.nextInt(100);
        if (k < 55) {
            String[] p = pair(r, space);
            boolean cycle = p[0].equals(p[1]) || reaches(p[0], p[1]);
            try {
                boolean added = g.addEdge(p[0], p[1]);
                if (cycle) {
                    fail("edge " + p[0] + " -> " + p[1] + " closes a cycle and was accepted");
                }
                assertEquals(!uses.getOrDefault(p[1], Set.of()).contains(p[0]), added, "addEdge's answer");
                uses.computeIfAbsent(p[0], x -> new HashSet<>());
                uses.computeIfAbsent(p[1], x -> new HashSet<>()).add(p[0]);
            } catch (CycleException e) {
                if (!cycle) {
                    throw new AssertionError("edge " + p[0] + " -> " + p[1] + " refused without a cycle", e);
                }
                refused++;
                checkCycle(e.cycle(), p[0], p[1]);
            }
        } else if (k < 75) {
            String[] p = pair(r, space);
            boolean had = uses.getOrDefault(p[1], Set.of()).contains(p[0]);
            assertEquals(had, g.removeEdge(p[0], p[1]), "removeEdge's answer");
            if (had) {
                uses.get(p[1]).remove(p[0]);
            }
        } else if (k < 88) {
            String n = name(r.nextInt(space));
            int want = r.nextInt(4) == 0 ? 40 + r.nextInt(40) : r.nextInt(6);
            Set<String> deps = new LinkedHashSet<>();
            for (int i = 0; i < want; i++) {
                deps.add(name(r.nextInt(space)));
            }
            boolean cycle = false;
            for (String d : deps) {
                cycle |= d.equals(n) || reaches(d, n);
            }
            try {
                g.setDependencies(n, deps);
                if (cycle) {
                    fail("setDependencies of " + n + " closes a cycle and was accepted");
                }
                uses.computeIfAbsent(n, x -> new HashSet<>()).clear();
                uses.get(n).addAll(deps);
                for (String d : deps) {
                    uses.computeIfAbsent(d, x -> new HashSet<>());
                }
            } catch (CycleException e) {
                if (!cycle) {
                    throw new AssertionError("setDependencies of " + n + " refused without a cycle", e);
                }
                refused++;
            }
        } else if (k < 94) {
            String n = name(r.nextInt(space));
            boolean had = uses.containsKey(n);
            assertEquals(had, g.removeNode(n), "removeNode's answer");
            uses.remove(n);
            for (Set<String> s : uses.values()) {
                s.remove(n);
            }
        } else if (k < 97) {
            String n = name(r.nextInt(space));
            assertEquals(!uses.containsKey(n), g.addNode(n), "addNode's answer");
            uses.computeIfAbsent(n, x -> new HashSet<>());
        } else {
            checkAffected(g, randomSet(r, space));
        }
    }

    /** Whether {@code from} uses {@code to}, directly or through others, in the model. */
    private boolean reaches(String from, String to) {
        ArrayDeque<String> todo = new ArrayDeque<>(List.of(from));
        Set<String> seen = new HashSet<>(todo);
        while (!todo.isEmpty()) {
            for (String y : uses.getOrDefault(todo.poll(), Set.of())) {
                if (y.equals(to)) {
                    return true;
                }
                if (seen.add(y)) {
                    todo.add(y);
                }
            }
        }
        return false;
    }

    /** The cycle reported: starts and ends at the dependency, ends with the new edge, each step an edge of the model. */
    private void checkCycle(List<String> c, String dependency, String dependent) {
        assertEquals(dependency, c.get(0), "cycle " + c);
        assertEquals(dependency, c.get(c.size() - 1), "cycle " + c);
        assertEquals(dependent, c.get(c.size() - 2), "cycle " + c);
        for (int i = 0; i + 2 < c.size(); i++) {
            assertTrue(uses.get(c.get(i)).contains(c.get(i + 1)), "cycle " + c + ": " + c.get(i) + " does not use " + c.get(i + 1));
        }
    }

    private static Set<String> randomSet(SplittableRandom r, int space) {
        Set<String> s = new HashSet<>();
        int n = 1 + r.nextInt(3);
        for (int i = 0; i < n; i++) {
            s.add(name(r.nextInt(space + 2))); // now and then a name that is not a node
        }
        return s;
    }

    private void checkAffected(DependencyGraph g, Set<String> changed) {
        List<String> got = g.affected(changed);
        Set<String> want = new TreeSet<>();
        ArrayDeque<String> todo = new ArrayDeque<>();
        for (String c : changed) {
            if (uses.containsKey(c) && want.add(c)) {
                todo.add(c);
            }
        }
        while (!todo.isEmpty()) {
            String x = todo.poll();
            for (Map.Entry<String, Set<String>> e : uses.entrySet()) {
                if (e.getValue().contains(x) && want.add(e.getKey())) {
                    todo.add(e.getKey());
                }
            }
        }
        assertEquals(want, new TreeSet<>(got), "affected(" + changed + ") as a set");
        assertEquals(want.size(), got.size(), "affected(" + changed + ") lists each node once: " + got);
        Map<String, Integer> at = new HashMap<>();
        for (int i = 0; i < got.size(); i++) {
            at.put(got.get(i), i);
        }
        for (String x : got) {
            for (String d : uses.get(x)) {
                if (at.containsKey(d)) {
                    assertTrue(at.get(d) < at.get(x), "affected order: " + x + " uses " + d + " but comes first in " + got);
                }
            }
        }
    }

    private void compareAll(DependencyGraph g, SplittableRandom r) {
        long edges = 0;
        Map<String, Set<String>> usedBy = new HashMap<>();
        for (Map.Entry<String, Set<String>> e : uses.entrySet()) {
            edges += e.getValue().size();
            for (String d : e.getValue()) {
                usedBy.computeIfAbsent(d, x -> new HashSet<>()).add(e.getKey());
            }
        }
        assertEquals(uses.size(), g.nodeCount(), "node count");
        if (!g.edgesMap().isEmpty()) {
            spilled++;
        }
        assertEquals(edges, g.edgeCount(), "edge count");
        try (WriteUnit u = new WriteUnit(storeOf(g))) {
            GraphEdit view = g.edit(u);
            for (String n : uses.keySet()) {
                assertTrue(g.contains(n), n + " is a node");
                assertEquals(uses.get(n), g.dependencies(n), "what " + n + " uses");
                assertEquals(usedBy.getOrDefault(n, Set.of()), g.dependents(n), "what uses " + n);
                for (String d : uses.get(n)) {
                    assertTrue(view.level(d) < view.level(n), "level of " + d + " below that of " + n + ", which uses it");
                }
            }
        }
        List<String> all = new ArrayList<>(uses.keySet());
        for (int i = 0; i < 5 && !all.isEmpty(); i++) {
            checkAffected(g, Set.of(all.get(r.nextInt(all.size()))));
        }
    }

    private static HtodStore storeOf(DependencyGraph g) {
        return g.store();
    }
}
