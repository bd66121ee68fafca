package org.htod.infinispan.example;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.htod.Durability;
import org.htod.RecoveryReport;
import org.htod.infinispan.HtodNonBlockingStore;
import org.htod.infinispan.HtodStoreConfigurationBuilder;
import org.infinispan.Cache;
import org.infinispan.commons.util.IntSets;
import org.infinispan.configuration.cache.CacheMode;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.configuration.global.UncleanShutdownAction;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.persistence.manager.PersistenceManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;

/**
 * An embedded Infinispan cluster on 127.0.0.1 whose nodes keep their data in htod: a distributed
 * cache with two owners per key, each node's share in its own htod file.
 *
 * <p>{@link #main} runs three nodes in this JVM: it writes through one node, stops another,
 * reads every key through the two left, restarts the stopped node on its files and reads every key
 * through it. {@link #startNode} is the configuration, for use on its own (one node per JVM).
 */
public final class LoopbackCluster {
    /** The distributed cache every node defines. */
    public static final String CACHE_NAME = "data";
    private static final String STACK = "loopback-tcp.xml";

    private LoopbackCluster() {}

    /**
     * Starts a node called {@code name} listening on 127.0.0.1:{@code port}, with its global state
     * and htod files under {@code dataDir}, in a cluster whose members listen on {@code
     * memberPorts}; returns once the cache is running on it.
     */
    public static DefaultCacheManager startNode(String name, Path dataDir, int port, List<Integer> memberPorts,
            Durability durability) {
        String hosts = memberPorts.stream().map(p -> "127.0.0.1[" + p + "]").collect(Collectors.joining(","));
        String stack = stackTemplate()
                .replace("{port}", Integer.toString(port))
                .replace("{hosts}", hosts)
                .replace("{fdOffset}", Integer.toString(fdOffset(memberPorts)));
        GlobalConfigurationBuilder global = GlobalConfigurationBuilder.defaultClusteredBuilder();
        global.transport().clusterName("htod-loopback").nodeName(name)
                .addProperty(JGroupsTransport.CONFIGURATION_STRING, stack);
        // A node killed with SIGKILL leaves its global-state lock file behind: drop that state (the
        // cluster view it remembered) on restart instead of refusing to start. Cache data lives in
        // the htod files, which recover on their own.
        global.globalState().enable().persistentLocation(dataDir.toString())
                .uncleanShutdownAction(UncleanShutdownAction.PURGE);
        ConfigurationBuilder cache = new ConfigurationBuilder();
        cache.clustering().cacheMode(CacheMode.DIST_SYNC).hash().numOwners(2);
        cache.persistence().addStore(HtodStoreConfigurationBuilder.class).durability(durability);
        DefaultCacheManager manager = new DefaultCacheManager(global.build());
        try {
            manager.defineConfiguration(CACHE_NAME, cache.build());
            manager.getCache(CACHE_NAME);
            return manager;
        } catch (RuntimeException e) {
            manager.stop();
            throw e;
        }
    }

    /**
     * FD_SOCK2 listens at the TCP port plus an offset, and looks for a member's listener at that
     * member's TCP port plus its own offset: every member must use the same one. Pick one that
     * keeps every member's port valid and clear of the TCP ports themselves, which the OS hands
     * out above 32768 here: below them when all ports are high, else 1000 above (the default
     * ports 7800 to 7802). An offset chosen per node from its own port let a node whose port lay
     * on the other side of 40000 look for its neighbour's listener in the wrong place, and
     * suspect it seconds after it joined, again and again.
     */
    private static int fdOffset(List<Integer> memberPorts) {
        int lowest = memberPorts.stream().mapToInt(Integer::intValue).min().orElseThrow();
        return lowest > 21024 ? -20000 : 1000;
    }

    private static String stackTemplate() {
        try (InputStream in = LoopbackCluster.class.getResourceAsStream(STACK)) {
            if (in == null) {
                throw new IllegalStateException(STACK + " is missing from the class path beside " + LoopbackCluster.class);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The htod store of the cache on {@code manager}: for its recovery report and size. */
    public static HtodNonBlockingStore<?, ?> store(DefaultCacheManager manager) {
        Cache<?, ?> cache = manager.getCache(CACHE_NAME);
        PersistenceManager pm = ComponentRegistry.componentOf(cache, PersistenceManager.class);
        @SuppressWarnings("rawtypes")
        java.util.Set<HtodNonBlockingStore> stores = pm.getStores(HtodNonBlockingStore.class);
        if (stores.size() != 1) {
            throw new IllegalStateException("expected one htod store on cache " + CACHE_NAME + ", found " + stores.size());
        }
        return stores.iterator().next();
    }

    /**
     * Three nodes on ports 7800 to 7802 (or those given), data under the directory given (or a new
     * temporary one): {@code LoopbackCluster [dir] [port port port]}.
     */
    public static void main(String[] args) throws IOException {
        Path dir = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("htod-loopback");
        List<Integer> ports = new ArrayList<>(List.of(7800, 7801, 7802));
        for (int i = 1; i < args.length && i <= 3; i++) {
            ports.set(i - 1, Integer.parseInt(args[i]));
        }
        int keys = 2_000;
        List<DefaultCacheManager> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                nodes.add(startNode("node-" + i, dir.resolve("node-" + i), ports.get(i), ports, Durability.SYNC));
            }
            System.out.println("cluster up: " + nodes.get(0).getMembers() + ", data under " + dir.toAbsolutePath());
            Cache<String, String> first = nodes.get(0).getCache(CACHE_NAME);
            long t0 = System.nanoTime();
            for (int k = 0; k < keys; k++) {
                first.put("key-" + k, "value-" + k);
            }
            System.out.printf("%,d durable writes through node-0 in %.1f s%n", keys, (System.nanoTime() - t0) / 1e9);
            nodes.get(1).stop();
            System.out.println("node-1 stopped; node-0 and node-2 read " + readAll(nodes.get(2), keys) + " of " + keys);
            nodes.set(1, startNode("node-1", dir.resolve("node-1"), ports.get(1), ports, Durability.SYNC));
            HtodNonBlockingStore<?, ?> restarted = store(nodes.get(1));
            RecoveryReport r = restarted.recoveryReport();
            long held = restarted.approximateSize(IntSets.immutableRangeSet(
                    nodes.get(1).getCache(CACHE_NAME).getCacheConfiguration().clustering().hash().numSegments()))
                    .toCompletableFuture().join();
            System.out.println("node-1 restarted on its htod file in " + r.took().toMillis() + " ms ("
                    + (r.clean() ? "closed cleanly" : "after a crash") + "), holding " + held
                    + " entries as an owner; it reads " + readAll(nodes.get(1), keys) + " of " + keys);
        } finally {
            if (!nodes.isEmpty() && nodes.get(0).getStatus().allowInvocations()) {
                // One cluster-wide shutdown: no rebalance between the nodes' stops, each store closed cleanly.
                nodes.get(0).shutdownAllCaches();
            }
            for (int i = nodes.size() - 1; i >= 0; i--) {
                nodes.get(i).stop();
            }
        }
    }

    private static int readAll(DefaultCacheManager node, int keys) {
        Cache<String, String> cache = node.getCache(CACHE_NAME);
        int found = 0;
        for (int k = 0; k < keys; k++) {
            if (("value-" + k).equals(cache.get("key-" + k))) {
                found++;
            }
        }
        return found;
    }
}
