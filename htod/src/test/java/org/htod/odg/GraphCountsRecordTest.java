package org.htod.odg;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.htod.Codec;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * The graph's own records are checked before use (docs/FORMAT.md): a counts record (key NUL
 * "counts" of {@code G.nodes}) of another length than 16 bytes threw BufferUnderflowException, and
 * a node record whose edge set said a negative count or bucket count read as an empty set, its
 * edges gone from every walk, the cycle check's included; both are typed errors now.
 */
class GraphCountsRecordTest {
    @Test
    void aShortCountsRecordIsATypedError() {
        try (HtodStore s = Htod.builder(new MemoryDevice()).open()) {
            DependencyGraph g = DependencyGraph.open(s, "g");
            g.addNode("a");
            s.map("g.nodes", Codec.string(), Codec.bytes()).put(DependencyGraph.COUNTS_KEY, new byte[3]);
            assertThrows(HtodException.class, g::nodeCount);
        }
    }

    @Test
    void aNodeRecordWithANegativeEdgeCountIsATypedErrorNotAnEmptySet() {
        NodeRecord r = new NodeRecord();
        r.usedBy.inline.add("b");
        byte[] ok = r.encode();
        NodeRecord.decode("a", ok); // as written
        for (int[] bad : new int[][] {{-1, 0}, {5, -4}, {5, 1}, {5, 6}}) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(ok.clone());
            b.putInt(5, bad[0]).putInt(9, bad[1]); // the "uses" side: count, buckets
            HtodException e = assertThrows(HtodException.class, () -> NodeRecord.decode("a", b.array()),
                    "count " + bad[0] + ", buckets " + bad[1]);
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("'uses' side"), e.getMessage());
        }
    }
}
