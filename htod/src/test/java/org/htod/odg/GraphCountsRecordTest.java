package org.htod.odg;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.htod.Codec;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * The counts record of a graph (key NUL "counts" of {@code G.nodes}, docs/FORMAT.md) is 16 bytes;
 * one of another length is refused as a typed error, not an untyped one.
 */
class GraphCountsRecordTest {
    @Disabled("DependencyGraph.counts reads two longs without checking the value's length: a short counts"
            + " record throws BufferUnderflowException out of nodeCount()")
    @Test
    void aShortCountsRecordIsATypedError() {
        try (HtodStore s = Htod.builder(new MemoryDevice()).open()) {
            DependencyGraph g = DependencyGraph.open(s, "g");
            g.addNode("a");
            s.map("g.nodes", Codec.string(), Codec.bytes()).put(DependencyGraph.COUNTS_KEY, new byte[3]);
            assertThrows(HtodException.class, g::nodeCount);
        }
    }
}
