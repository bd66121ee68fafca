package org.htod.odg;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;

/**
 * Builds a site-shaped graph of {@code nodes} nodes and five times as many edges in a store file,
 * reopens it and checks it; run in a JVM of its own with a small heap by {@link GraphScaleTest}.
 * Four fifths of the nodes are fragments, the rest pages that use 25 nodes each: a tenth of them
 * among 100 results hubs (hundreds to thousands of users each, so their edge sets live in buckets), a tenth
 * among earlier pages (composites), the rest among fragments.
 *
 * <p>{@code java -Xmx256m -cp ... org.htod.odg.GraphScaleRun <nodes> <store file> [direct]}: the
 * store in log mode (the default), or in direct mode with {@code direct}.
 */
public final class GraphScaleRun {
    private static final int USES = 25;
    private static final int HUBS = 100;
    private static final int PAGES_PER_UNIT = 500;

    private GraphScaleRun() {}

    public static void main(String[] args) throws Exception {
        int nodes = Integer.parseInt(args[0]);
        Path file = Path.of(args[1]);
        boolean direct = args.length > 2 && args[2].equals("direct");
        int pages = nodes / 5;
        int fragments = nodes - pages;
        long edges = (long) pages * USES;
        SplittableRandom r = new SplittableRandom(42);
        long t0 = System.nanoTime();
        try (HtodStore store = Htod.builder(file).directMode(direct).durability(Durability.NONE).open()) {
            DependencyGraph g = DependencyGraph.open(store, "odg");
            for (int f = 0; f < fragments; f += 10_000) {
                try (WriteUnit u = new WriteUnit(store)) {
                    GraphEdit e = g.edit(u);
                    for (int i = f; i < Math.min(fragments, f + 10_000); i++) {
                        e.addNode(fragment(i));
                    }
                    u.commit();
                }
            }
            for (int p = 0; p < pages; p += PAGES_PER_UNIT) {
                try (WriteUnit u = new WriteUnit(store)) {
                    GraphEdit e = g.edit(u);
                    for (int i = p; i < Math.min(pages, p + PAGES_PER_UNIT); i++) {
                        e.setDependencies(page(i), uses(r, i, fragments));
                    }
                    u.commit();
                }
                if (p % 20_000 == 0) {
                    System.out.printf("  %,d pages, %,d edges, %.0f s, heap used %d MiB%n", p, g.edgeCount(),
                            (System.nanoTime() - t0) / 1e9, usedMiB());
                }
            }
            check(g.nodeCount() == nodes, "nodes " + g.nodeCount() + ", expected " + nodes);
            check(g.edgeCount() == edges, "edges " + g.edgeCount() + ", expected " + edges);
        }
        double build = (System.nanoTime() - t0) / 1e9;
        long t1 = System.nanoTime();
        try (HtodStore store = Htod.builder(file).directMode(direct).durability(Durability.NONE).open()) {
            double open = (System.nanoTime() - t1) / 1e9;
            DependencyGraph g = DependencyGraph.open(store, "odg");
            check(g.nodeCount() == nodes && g.edgeCount() == edges, "counts after reopening: " + g);
            long t2 = System.nanoTime();
            List<String> a = g.affected(List.of(fragment(0)));
            double affected = (System.nanoTime() - t2) / 1e9;
            Set<String> users = g.dependents(fragment(0));
            check(users.size() > DependencyGraph.INLINE_EDGES, "hub users " + users.size() + ", too few to leave the record");
            check(a.containsAll(users), "affected holds every direct user of the hub");
            Map<String, Integer> at = new HashMap<>();
            for (int i = 0; i < a.size(); i++) {
                at.put(a.get(i), i);
            }
            for (String x : a.subList(0, Math.min(a.size(), 2000))) {
                for (String d : g.dependencies(x)) {
                    check(!at.containsKey(d) || at.get(d) < at.get(x), "order: " + x + " before " + d);
                }
            }
            System.out.printf("graph scale: %,d nodes, %,d edges built in %.1f s; reopened in %.2f s; affected(hub) = %,d"
                    + " nodes in %.2f s; %,d bytes on disk; heap used %d MiB of %d MiB max%n", nodes, edges, build, open,
                    a.size(), affected, Files.size(file), usedMiB(), Runtime.getRuntime().maxMemory() >> 20);
        }
    }

    private static String fragment(int i) {
        return i < HUBS ? "/results/" + i + ".html" : "/frag/" + i + ".html";
    }

    private static String page(int i) {
        return "/page/" + i + ".html";
    }

    private static Set<String> uses(SplittableRandom r, int page, int fragments) {
        Set<String> s = new LinkedHashSet<>();
        while (s.size() < USES) {
            int k = r.nextInt(10);
            if (k == 0) {
                s.add(fragment(r.nextInt(HUBS)));
            } else if (k == 1 && page > 0) {
                s.add(page(r.nextInt(page)));
            } else {
                s.add(fragment(HUBS + r.nextInt(fragments - HUBS)));
            }
        }
        return s;
    }

    private static long usedMiB() {
        Runtime rt = Runtime.getRuntime();
        return (rt.totalMemory() - rt.freeMemory()) >> 20;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static List<String> command(int nodes, Path file) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(GraphScaleRun.class.getName());
        cmd.add(Integer.toString(nodes));
        cmd.add(file.toString());
        return cmd;
    }
}
