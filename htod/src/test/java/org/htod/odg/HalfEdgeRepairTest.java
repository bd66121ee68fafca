package org.htod.odg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.TreeMap;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.htod.fragment.FragmentCache;
import org.junit.jupiter.api.Test;

/**
 * In direct mode a commit writes the graph's records one by one, so a crash during it can leave
 * half an edge: the dependent's "uses" without the dependency's "used by", or the reverse, or a
 * spilled edge set's node record without one of its buckets. Each test writes such a state into
 * the maps as a crash would leave it, then edits again, and the graph must be whole afterwards.
 * Republishing used to look at the "used by" half only and add both halves again, counting a
 * member twice in a set that held it once: the node's record could no longer be read, and every
 * later publish touching it failed. A half whose other node has no record made {@code affected}
 * throw a NullPointerException.
 */
class HalfEdgeRepairTest {
    private static HtodStore direct() {
        return direct(new MemoryDevice());
    }

    private static HtodStore direct(BlockDevice dev) {
        return Htod.builder(dev).grain(64).directMode(true).logSize(0).durability(Durability.NONE).open();
    }

    /**
     * Power is cut at every write and sync of a commit that adds "/b uses /a" (the write at the
     * cut lost or in flight, several seeds for what the crash keeps), and the store reopened.
     * /a is above /b, so /b is lifted and its record written first; some crashes keep it, with its "uses" half and its raised level, and lose /a's
     * "used by" half. The cycle check walks up from the new edge's dependent along "used by"
     * halves only, and /b's level is above /a's: adding "/a uses /b" went unchecked and closed
     * the cycle /a, /b, /a. Opening the graph now repairs the edge, so the cycle is refused
     * whenever either half of the edge survived, and accepted only where none did.
     */
    @Test
    void aUsesHalfLeftByACutCommitIsSeenByTheCycleCheckAfterReopening() {
        Map<String, Integer> seen = new TreeMap<>();
        List<String> wrongCounts = new ArrayList<>();
        List<String> accepted = new ArrayList<>(); // halves left, and "/a uses /b" accepted
        boolean reachedTheEnd = false;
        for (long n = 1; n <= 300 && !reachedTheEnd; n++) {
            for (CutWrite atCut : CutWrite.values()) {
                for (long seed = 0; seed < 8 && !reachedTheEnd; seed++) {
                    String where = "cut at " + n + " (" + atCut + "), crash seed " + seed;
                    MemoryDevice disk = new MemoryDevice();
                    CrashDevice dev = new CrashDevice(disk);
                    HtodStore store = direct(dev);
                    try {
                        DependencyGraph g = DependencyGraph.open(store, "g");
                        try (WriteUnit u = new WriteUnit(store)) {
                            GraphEdit e = g.edit(u);
                            String pad = "/" + "p".repeat(100);
                            for (int i = 0; i < 60; i++) { // /a's "used by" in buckets of the edges map
                                e.addEdge("/a", pad + "/a" + i);
                            }
                            for (int i = 0; i < 40; i++) { // /b's record some kilobytes
                                e.addEdge(pad + "/b" + i, "/b");
                            }
                            e.addEdge("/q0", "/q1");
                            e.addEdge("/q1", "/a"); // /a at level 2, above /b: the new edge lifts /b
                            u.commit();
                        }
                        dev.armPowerCut(n, Counting.WRITES_AND_SYNCS, atCut);
                        g.addEdge("/a", "/b"); // /b uses /a
                        reachedTheEnd = !dev.powerCut();
                    } catch (RuntimeException e) {
                        if (!dev.powerCut()) {
                            throw e;
                        }
                    }
                    dev.crash(seed, seed % 2 == 1);
                    try {
                        store.close();
                    } catch (RuntimeException expected) {
                        // the device is gone
                    }
                    try (HtodStore again = direct(disk.reopen())) {
                        HtodMap<String, byte[]> raw = again.map("g.nodes", Codec.string(), Codec.bytes());
                        byte[] a = raw.get("/a");
                        byte[] b = raw.get("/b");
                        boolean uses = b != null && NodeRecord.decode("/b", b).uses.inline.contains("/a");
                        boolean usedBy = a != null && usedBy(again, NodeRecord.decode("/a", a), "/a", "/b");
                        String state = (uses ? "uses" : "-") + "/" + (usedBy ? "used by" : "-");
                        seen.merge(state, 1, Integer::sum);
                        DependencyGraph g = DependencyGraph.open(again, "g");
                        if (uses || usedBy) {
                            try {
                                g.addEdge("/b", "/a");
                                accepted.add(state + " (" + where + ")");
                                continue;
                            } catch (CycleException c) {
                                assertEquals(List.of("/b", "/a", "/b"), c.cycle(), where);
                            }
                            assertTrue(g.dependencies("/b").contains("/a") && g.dependents("/a").contains("/b"), where);
                            if (g.edgeCount() != 103 || g.nodeCount() != 104) {
                                wrongCounts.add(where + ": " + g);
                            }
                        } else {
                            assertTrue(g.addEdge("/b", "/a"), where + ": no half of \"/b uses /a\" left");
                        }
                        assertTrue(!raw.containsKey(DependencyGraph.CUT_KEY), where + ": the marker stays after the repair");
                    }
                }
            }
        }
        System.out.println("halves left by the crashes of one commit: " + seen);
        assertTrue(reachedTheEnd, "the commit completed without a cut within 300 writes and syncs");
        assertTrue(seen.getOrDefault("uses/-", 0) > 0, "no crash left the \"uses\" half alone: " + seen);
        assertEquals(List.of(), accepted, "\"/a uses /b\" closed a cycle through the halves left");
        assertEquals(List.of(), wrongCounts, "the repair sets the counts to what the graph holds");
    }

    /** Whether {@code node}'s "used by" side, as stored, holds {@code member}. */
    private static boolean usedBy(HtodStore store, NodeRecord r, String node, String member) {
        if (r.usedBy.buckets == 0) {
            return r.usedBy.inline.contains(member);
        }
        String k = GraphEdit.bucketKey(node, 'd', GraphEdit.index(member, r.usedBy.buckets));
        byte[] b = store.map("g.edges", Codec.string(), Codec.bytes()).get(k);
        return b != null && NodeRecord.decodeBucket(k, b).contains(member);
    }

    /**
     * A commit lifts a node and what uses it; a crash that keeps the lifted node's record but
     * loses that of a node using it leaves a whole edge whose levels fall. The cycle check trusts
     * levels (an edge going upwards is not searched), so an edge closing a cycle through it was
     * accepted. Reopening the graph lifts the levels again.
     */
    @Test
    void aLostLiftIsRedoneWhenTheGraphIsOpenedAfterACutCommit() {
        MemoryDevice disk = new MemoryDevice();
        try (HtodStore store = direct(disk)) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            g.addEdge("/a", "/b");
            g.addEdge("/b", "/c"); // levels /a 0, /b 1, /c 2
            for (int i = 0; i < 5; i++) {
                g.addEdge("/x" + i, "/x" + (i + 1)); // /x5 at level 5
            }
            byte[] c = g.nodesMap().get("/c");
            g.addEdge("/x5", "/b"); // /b lifted to 6, /c to 7
            g.nodesMap().put("/c", c); // the crash lost /c's write: /c back at 2, under /b
            g.nodesMap().put(DependencyGraph.CUT_KEY, new byte[] {1}); // and left the marker
        }
        try (HtodStore store = direct(disk.reopen())) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            CycleException e = assertThrows(CycleException.class, () -> g.addEdge("/c", "/b"),
                    "\"/b uses /c\" closes the cycle /c, /b, /c");
            assertEquals(List.of("/c", "/b", "/c"), e.cycle());
            assertEquals(List.of("/b", "/c"), g.affected(List.of("/b")));
        }
    }

    @Test
    void addingAnEdgeAgainRepairsTheMissingUsedByHalf() {
        try (HtodStore store = direct()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            g.addEdge("/z", "/b"); // /b uses /z
            g.nodesMap().put("/z", new NodeRecord().encode()); // the write of /z's half lost
            assertEquals(List.of("/z"), g.affected(List.of("/z")), "the half edge hides /b from /z's changes");
            assertTrue(g.addEdge("/z", "/b"), "the missing half is added");
            assertEquals(Set.of("/b"), g.dependents("/z"));
            assertEquals(Set.of("/z"), g.dependencies("/b"));
            assertEquals(List.of("/z", "/b"), g.affected(List.of("/z")));
            assertFalse(g.addEdge("/z", "/b"), "whole now");
            assertTrue(g.removeEdge("/z", "/b"));
            assertEquals(Set.of(), g.dependents("/z"));
            assertEquals(Set.of(), g.dependencies("/b"));
        }
    }

    @Test
    void aUsedByHalfToANodeWithoutARecordIsSkippedAndRemovable() {
        try (HtodStore store = direct()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            g.addEdge("/x", "/y");
            g.addEdge("/x", "/w");
            g.nodesMap().remove("/y"); // /y's record never written
            assertEquals(List.of("/x", "/w"), g.affected(List.of("/x")));
            g.addEdge("/w", "/v"); // raises through /x's dependents: /y is skipped there too
            assertTrue(g.removeEdge("/x", "/y"), "the half left is removed");
            assertEquals(Set.of("/w"), g.dependents("/x"));
        }
    }

    @Test
    void aSpilledSetMissingABucketIsRepairedAndMovesBackInlineReadable() {
        try (HtodStore store = direct()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            int n = DependencyGraph.INLINE_EDGES + 20; // /f's "used by" lives in buckets
            for (int i = 0; i < n; i++) {
                g.addEdge("/f", "/p" + i);
            }
            String lost = null;
            for (String k : g.edgesMap().keySet()) {
                lost = k;
                break;
            }
            g.edgesMap().remove(lost); // one bucket's write lost
            Set<String> left = g.dependents("/f");
            assertTrue(left.size() < n, "a bucket's members are gone");
            for (int i = 0; i < n; i++) {
                g.addEdge("/f", "/p" + i); // republishing each page repairs its half
            }
            assertEquals(n, g.dependents("/f").size());
            for (int i = 0; i < n; i++) {
                assertTrue(g.removeEdge("/f", "/p" + i));
            }
            assertEquals(Set.of(), g.dependents("/f"), "the record, back inline, reads again");
            Set<String> none = new HashSet<>();
            for (int i = 0; i < n; i++) {
                none.addAll(g.dependencies("/p" + i));
            }
            assertEquals(Set.of(), none);
        }
    }

    @Test
    void republishingAPageRepairsItsIncludeSoChangesReachIt() {
        try (HtodStore store = direct()) {
            FragmentCache c = FragmentCache.open(store, "site");
            c.publish("/z", "zzz");
            c.publish("/b", "x<!--#include virtual=\"/z\" -->y");
            DependencyGraph g = c.graph();
            g.nodesMap().put("/z", new NodeRecord().encode()); // the crash lost /z's half
            c.publish("/b", "x<!--#include virtual=\"/z\" -->y");
            c.publish("/z", "ZZZ");
            assertEquals("xZZZy", c.page("/b"));
        }
    }
}
