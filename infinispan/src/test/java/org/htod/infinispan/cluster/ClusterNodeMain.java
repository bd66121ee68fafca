package org.htod.infinispan.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.htod.Durability;
import org.htod.RecoveryReport;
import org.htod.infinispan.HtodNonBlockingStore;
import org.htod.infinispan.example.LoopbackCluster;
import org.infinispan.Cache;
import org.infinispan.commons.util.IntSets;
import org.infinispan.manager.DefaultCacheManager;

/**
 * One cluster node in a JVM of its own, driven by {@link ClusterKillTest} through its standard
 * input, one command a line; it answers on standard output with lines the test looks for:
 *
 * <pre>
 * PUT a b     puts key-i = value-i for a <= i < b, printing "ACK i" as each put returns, then "DONE"
 * CHECK a b   reads keys a..b-1 through this node: "CHECKED missing wrong firstBad"
 * MEMBERS     "MEMBERS n": members of the cluster view
 * REPORT      "REPORT clean entriesAtStart tookMs stored logged": what opening the htod store found
 *             (whether it was closed cleanly, the cache's entries in the file, how long the open took),
 *             its size now, and whether it writes through htod's log
 * QUIT        stops the node and exits
 * </pre>
 *
 * Arguments: node name, data directory, own port, then every member's port.
 */
public final class ClusterNodeMain {
    private ClusterNodeMain() {}

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        List<Integer> ports = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            ports.add(Integer.parseInt(args[i]));
        }
        DefaultCacheManager node = LoopbackCluster.startNode(args[0], Path.of(args[1]), Integer.parseInt(args[2]), ports,
                Durability.SYNC);
        Cache<String, String> cache = node.getCache(LoopbackCluster.CACHE_NAME);
        out.println("READY " + args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] c = line.trim().split(" ");
            switch (c[0]) {
                case "PUT" -> {
                    for (int i = Integer.parseInt(c[1]); i < Integer.parseInt(c[2]); i++) {
                        cache.put("key-" + i, "value-" + i);
                        out.println("ACK " + i);
                    }
                    out.println("DONE");
                }
                case "CHECK" -> {
                    int missing = 0;
                    int wrong = 0;
                    String firstBad = "-";
                    for (int i = Integer.parseInt(c[1]); i < Integer.parseInt(c[2]); i++) {
                        String v = cache.get("key-" + i);
                        if (v == null || !v.equals("value-" + i)) {
                            if (v == null) {
                                missing++;
                            } else {
                                wrong++;
                            }
                            firstBad = firstBad.equals("-") ? "key-" + i : firstBad;
                        }
                    }
                    out.println("CHECKED " + missing + " " + wrong + " " + firstBad);
                }
                case "MEMBERS" -> out.println("MEMBERS " + node.getMembers().size());
                case "REPORT" -> {
                    HtodNonBlockingStore<?, ?> store = LoopbackCluster.store(node);
                    RecoveryReport r = store.recoveryReport();
                    long stored = store.approximateSize(IntSets.immutableRangeSet(
                            cache.getCacheConfiguration().clustering().hash().numSegments())).toCompletableFuture().join();
                    out.println("REPORT " + r.clean() + " " + store.entriesAtStart() + " " + r.took().toMillis() + " " + stored + " "
                            + store.logged());
                }
                case "QUIT" -> {
                    node.stop();
                    out.println("BYE");
                    System.exit(0); // a thread the node left running must not keep this JVM alive
                    return;
                }
                default -> out.println("UNKNOWN " + line);
            }
        }
        node.stop(); // standard input closed: the test is gone
        System.exit(0);
    }
}
