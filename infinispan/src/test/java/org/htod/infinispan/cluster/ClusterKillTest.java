package org.htod.infinispan.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Three nodes in three JVMs on 127.0.0.1 (JGroups TCP, loopback only), a distributed cache with
 * two owners, htod as every node's store at durability SYNC. Writes are acknowledged, one node is
 * killed with SIGKILL in the middle of its own writes and restarted on its files; then its htod
 * store must have reopened after an unclean shutdown with at least every entry it held before the
 * kill, and every acknowledged key must be served, with its value, through every node.
 */
class ClusterKillTest {
    // Generous: durable writes wait for fsyncs, which a disk shared with other builds can slow tenfold.
    private static final Duration START = Duration.ofMinutes(3);
    private static final Duration STEP = Duration.ofMinutes(5);
    /** Keys written through node-0 before the kill, all acknowledged. */
    private static final int FIRST = 600;
    /** Keys node-1 is asked to write; it is killed after {@link #ACKS_BEFORE_KILL} of them. */
    private static final int SECOND = 5_000;
    private static final int ACKS_BEFORE_KILL = 200;

    @Test
    void acknowledgedWritesSurviveSigkillOfANode() throws Exception {
        Path root = Files.createDirectories(Path.of(System.getProperty("htod.test.dir", "target/test-stores")));
        Path dir = Files.createTempDirectory(root, "cluster-kill");
        List<Integer> ports = freePorts(3);
        List<NodeProcess> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                nodes.add(NodeProcess.start("node-" + i, dir.resolve("node-" + i), i, ports));
            }
            for (NodeProcess n : nodes) {
                n.expect("READY", START);
            }
            awaitMembers(nodes, 3);

            nodes.get(0).ask("PUT 0 " + FIRST, "DONE", STEP);
            // What node-1's store holds once node-0's writes are acknowledged: a floor for its reopen.
            long heldBefore = Long.parseLong(nodes.get(1).ask("REPORT", "REPORT", STEP).split(" ")[4]);
            assertTrue(heldBefore > 0, "node-1 owns part of " + FIRST + " keys in a 3-node, 2-owner cache");

            NodeProcess victim = nodes.get(1);
            victim.send("PUT " + FIRST + " " + (FIRST + SECOND));
            long deadline = System.nanoTime() + STEP.toNanos();
            while (victim.acks() < ACKS_BEFORE_KILL && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            victim.kill();
            int lastAck = victim.lastAck();
            assertTrue(lastAck >= FIRST + ACKS_BEFORE_KILL - 1 && lastAck < FIRST + SECOND - 1,
                    "node-1 must be killed in the middle of its writes; last acknowledged key " + lastAck);
            awaitMembers(List.of(nodes.get(0), nodes.get(2)), 2);

            NodeProcess restarted = NodeProcess.start("node-1", dir.resolve("node-1"), 1, ports);
            nodes.set(1, restarted);
            restarted.expect("READY", START);
            awaitMembers(nodes, 3);
            String[] report = restarted.ask("REPORT", "REPORT", STEP).split(" ");
            assertEquals("false", report[1], "node-1's htod store must know it was not closed");
            assertEquals("true", report[5], "the store writes through htod's log by default");
            // The cache's entries in the file as the restart found it, before state transfer adds any,
            // counted on a copy before the node started: in log mode what the checkpoint's tables
            // and the replayed log hold.
            long recovered = Long.parseLong(report[2]);
            System.out.printf("node-1 killed after acknowledging keys up to %d; its store held %d entries before, "
                    + "reopened after the kill in %s ms with %d%n", lastAck, heldBefore, report[3], recovered);
            assertTrue(recovered >= heldBefore, "node-1's store held " + heldBefore + " entries before the kill and "
                    + "recovered " + recovered);

            for (NodeProcess n : nodes) {
                assertEquals("CHECKED 0 0 -", n.ask("CHECK 0 " + (lastAck + 1), "CHECKED", STEP),
                        "missing and wrong values among keys 0.." + lastAck + ", all acknowledged");
            }
        } finally {
            for (NodeProcess n : nodes) {
                n.close();
            }
            deleteTree(dir);
        }
    }

    private static void awaitMembers(List<NodeProcess> nodes, int members) throws InterruptedException {
        long deadline = System.nanoTime() + START.toNanos();
        for (NodeProcess n : nodes) {
            while (!n.ask("MEMBERS", "MEMBERS", STEP).equals("MEMBERS " + members)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the cluster did not reach " + members + " members within " + START);
                }
                Thread.sleep(200);
            }
        }
    }

    /** Ports the OS has just handed out on 127.0.0.1, so that runs beside other builds do not collide. */
    private static List<Integer> freePorts(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports.add(s.getLocalPort());
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
