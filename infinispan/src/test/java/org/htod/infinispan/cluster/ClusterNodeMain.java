package org.htod.infinispan.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
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
 *             (whether it was closed cleanly, how long the open took), the cache's entries in the
 *             file before the node started ({@link #countOnACopy}; -1 for a new node), the store's
 *             size now, and whether it writes through htod's log
 * QUIT        stops the node and exits
 * </pre>
 *
 * Arguments: node name, data directory, own port, then every member's port.
 */
public final class ClusterNodeMain {
    private ClusterNodeMain() {}

    /**
     * The entries of the cache in the htod file under {@code dataDir} as a restart finds them,
     * before the node starts and state transfer adds any: counted on a copy, which htod opens
     * (recovering it as the node's store will recover the original, after a crash by replaying
     * the log) and closes; the original is left as the crash left it. -1 if there is no file yet.
     */
    static long countOnACopy(Path dataDir) throws IOException {
        Path file;
        if (!Files.isDirectory(dataDir)) {
            return -1;
        }
        try (Stream<Path> s = Files.walk(dataDir)) {
            file = s.filter(p -> p.getFileName().toString().equals(HtodNonBlockingStore.FILE_NAME)).findFirst().orElse(null);
        }
        if (file == null) {
            return -1;
        }
        Path copy = Files.createTempFile(dataDir, "count", ".htod");
        try {
            Files.copy(file, copy, StandardCopyOption.REPLACE_EXISTING);
            try (HtodStore s = Htod.builder(copy).open()) {
                long n = 0;
                for (String name : s.mapNames()) {
                    if (!name.equals("infinispan-layout")) {
                        n += s.map(name, Codec.bytes(), Codec.bytes()).longSize();
                    }
                }
                return n;
            }
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        List<Integer> ports = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            ports.add(Integer.parseInt(args[i]));
        }
        long entriesAtStart = countOnACopy(Path.of(args[1]));
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
                    out.println("REPORT " + r.clean() + " " + entriesAtStart + " " + r.took().toMillis() + " " + stored + " "
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
