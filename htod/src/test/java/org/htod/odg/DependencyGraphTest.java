package org.htod.odg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The graph's contract on small known graphs: cycles, order, edge sets in buckets, units, reopen. */
class DependencyGraphTest {
    private static HtodStore memory() {
        return Htod.builder(new MemoryDevice()).grain(64).logSize(1 << 20).durability(Durability.NONE).open();
    }

    @Test
    void anEdgeThatClosesACycleIsRefusedWithTheCycleAndNothingChanges() {
        try (HtodStore store = memory()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            g.addEdge("/frag", "/comp");  // /comp uses /frag
            g.addEdge("/comp", "/page");  // /page uses /comp
            CycleException e = assertThrows(CycleException.class, () -> g.addEdge("/page", "/frag"));
            assertEquals(List.of("/page", "/comp", "/frag", "/page"), e.cycle());
            assertEquals("refused: the edge would close a cycle: /page uses /comp uses /frag uses /page", e.getMessage());
            CycleException self = assertThrows(CycleException.class, () -> g.addEdge("/page", "/page"));
            assertEquals(List.of("/page", "/page"), self.cycle());
            assertEquals(3, g.nodeCount());
            assertEquals(2, g.edgeCount());
            assertEquals(Set.of(), g.dependencies("/frag"));
            // the lock of the refused unit was released: the graph takes changes again
            assertTrue(g.addEdge("/frag", "/page"));
        }
    }

    @Test
    void affectedListsEveryUserAfterWhatItUses() {
        try (HtodStore store = memory()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            // a diamond over a results fragment, and a page added before its composite had users
            g.setDependencies("/index", List.of("/medals", "/nav"));
            g.setDependencies("/medals", List.of("/results/ski"));
            g.setDependencies("/sport/ski", List.of("/results/ski", "/medals", "/nav"));
            g.setDependencies("/athlete/7", List.of("/bio/7"));
            List<String> a = g.affected(List.of("/results/ski"));
            assertEquals(Set.of("/results/ski", "/medals", "/index", "/sport/ski"), new HashSet<>(a));
            assertTrue(a.indexOf("/results/ski") < a.indexOf("/medals"));
            assertTrue(a.indexOf("/medals") < a.indexOf("/index"));
            assertTrue(a.indexOf("/medals") < a.indexOf("/sport/ski"));
            assertEquals(List.of("/nav", "/index", "/sport/ski"), g.affected(List.of("/nav", "/unknown")));
        }
    }

    @Test
    void largeEdgeSetsLiveInBucketsAndComeBackInline() {
        try (HtodStore store = memory()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            int users = 1000;
            try (WriteUnit u = new WriteUnit(store)) {
                GraphEdit e = g.edit(u);
                for (int i = 0; i < users; i++) {
                    e.addEdge("/results", "/page/" + i);
                }
                u.commit();
            }
            assertEquals(users, g.dependents("/results").size());
            // 1000 names in buckets of about 32 to 64: the record itself holds none of them
            long buckets = g.edgesMap().size();
            assertTrue(buckets >= users / 64 && buckets <= users / 16, buckets + " buckets");
            assertTrue(g.nodesMap().get("/results").length < 64, "the hub's record stays small");
            for (int i = 0; i < users - 10; i++) {
                assertTrue(g.removeEdge("/results", "/page/" + i));
            }
            assertEquals(0, g.edgesMap().size(), "back inline once the set is small");
            assertEquals(10, g.dependents("/results").size());
        }
    }

    @Test
    void aUnitClosedWithoutCommitWritesNothing() {
        try (HtodStore store = memory()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            try (WriteUnit u = new WriteUnit(store)) {
                GraphEdit e = g.edit(u);
                e.addEdge("/a", "/b");
                assertEquals(Set.of("/a"), e.dependencies("/b"), "the edit sees its own change");
                assertFalse(g.contains("/b"), "the stored graph does not, before the commit");
            }
            assertEquals(0, g.nodeCount());
            try (WriteUnit u = new WriteUnit(store)) {
                GraphEdit e = g.edit(u);
                e.addEdge("/a", "/b");
                assertThrows(CycleException.class, () -> e.addEdge("/b", "/a"));
                assertThrows(IllegalStateException.class, u::commit, "a failed unit cannot commit");
            }
            assertEquals(0, g.nodeCount());
        }
    }

    @Test
    void badNamesAreRefused() {
        try (HtodStore store = memory()) {
            DependencyGraph g = DependencyGraph.open(store, "g");
            assertThrows(IllegalArgumentException.class, () -> g.addNode(""));
            assertThrows(IllegalArgumentException.class, () -> g.addEdge("/a\0b", "/c"));
            assertThrows(IllegalArgumentException.class, () -> g.addNode("x".repeat(Names.MAX_BYTES + 1)));
            assertEquals(0, g.nodeCount());
        }
    }

    @Test
    void aGraphOnAFileIsTheSameAfterReopening(@TempDir Path dir) {
        Path f = dir.resolve("odg.htod");
        List<String> before;
        try (HtodStore store = Htod.builder(f).open()) {
            DependencyGraph g = DependencyGraph.open(store, "site");
            List<String> pages = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                pages.add("/page/" + i);
                g.setDependencies("/page/" + i, List.of("/nav", "/results/" + (i % 7)));
            }
            g.setDependencies("/index", pages.subList(0, 120));
            before = g.affected(List.of("/results/3", "/nav"));
        }
        try (HtodStore store = Htod.builder(f).open()) {
            assertTrue(store.recoveryReport().clean());
            DependencyGraph g = DependencyGraph.open(store, "site");
            assertEquals(before, g.affected(List.of("/results/3", "/nav")));
            assertEquals(209, g.nodeCount());
            assertEquals(200 * 2 + 120, g.edgeCount());
            assertEquals(200, g.dependents("/nav").size());
        }
        assertTrue(Files.exists(f));
    }
}
