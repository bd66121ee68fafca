package org.htod.odg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
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
        return Htod.builder(new MemoryDevice()).grain(64).directMode(true).logSize(0).durability(Durability.NONE).open();
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
