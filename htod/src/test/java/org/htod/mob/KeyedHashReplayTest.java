package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.MemoryDevice;
import org.htod.table.HashtableOnDisk;
import org.junit.jupiter.api.Test;

/**
 * Log mode: a map created after the last checkpoint, whose table's hash key is in its header and
 * its state only in the log, keeps its key through a crash and the log's replay. The replay
 * checks each placed value's entry against the key's hash by that table's function; the changes
 * the log holds go back into the write buffer under the same hashes, and install there.
 */
class KeyedHashReplayTest {
    private static Htod.Builder builder(MemoryDevice dev) {
        return Htod.builder(dev).grain(64).logSize(1 << 20).durability(Durability.SYNC).placeValuesFrom(512);
    }

    /** The table's hashes of a few keys: equal for two tables only under one function and key. */
    private static long[] probes(HashtableOnDisk t) {
        long[] out = new long[8];
        for (int i = 0; i < out.length; i++) {
            out[i] = t.hash(("probe" + i).getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    private static String value(int i) {
        return i % 2 == 0 ? "v" + i : ("placed" + i).repeat(100); // odd keys: values placed in the heap
    }

    @Test
    void theKeySurvivesTheLogsReplay() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = builder(disk).open();
        MemoryDevice crashed;
        long[] before;
        try {
            WriteLayer layer = LogStores.layer(s);
            layer.stopFlusherThread();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 200; i++) {
                m.put("k" + i, value(i));
                if (i == 99) {
                    layer.installs.everything(); // half installed, half in the log and the buffer only
                }
            }
            before = probes(layer.map("m", false).table);
            crashed = LogStores.copy(disk); // the device as a power cut now would leave it
        } finally {
            LogStores.closeQuietly(s);
        }
        try (HtodStore again = builder(crashed).open()) {
            assertTrue(!again.recoveryReport().clean() && again.recoveryReport().logDataRecords() >= 100,
                    again.recoveryReport().toString());
            WriteLayer layer = LogStores.layer(again);
            assertArrayEquals(before, probes(layer.map("m", false).table));
            HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 200; i++) {
                assertEquals(value(i), m.get("k" + i), "k" + i);
            }
            layer.installs.everything();
            LogStores.verify(again);
        }
    }
}
