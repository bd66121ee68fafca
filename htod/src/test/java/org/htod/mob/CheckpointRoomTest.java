package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The room a log-mode heap keeps at its end for checkpoints' blocks follows the size of their
 * records: three blocks of a quarter more than the latest record (and the acceptable waste), no
 * fixed allowance that makes it a fifth of a small heap.
 */
class CheckpointRoomTest {
    private static final long HEAP = 256 << 10;

    private static HtodStore open(MemoryDevice mem) {
        return Htod.builder(mem).grain(64).logSize(1 << 20).heapCapacity(HEAP).bufferSize(64 << 10)
                .durability(Durability.SYNC).open();
    }

    /** Bytes of the record of the checkpoint in force, as the superblock names it. */
    private static long record(WriteLayer layer) {
        return layer.storage().superblock().snapshotLength();
    }

    @Test
    @Timeout(60)
    void theRoomIsSizedByTheCheckpointsRecord() {
        try (HtodStore s = open(new MemoryDevice())) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 100; i++) {
                m.put("k" + i, "v" + i);
            }
            s.checkpoint();
            WriteLayer layer = LogStores.layer(s);
            long kept = layer.storage().heap().keptForCheckpoints();
            long rec = record(layer);
            assertTrue(kept >= 3 * rec, "kept " + kept + " for a checkpoint of " + rec + " bytes");
            assertTrue(kept <= HEAP / 32, "kept " + kept + " of a heap of " + HEAP + " for a checkpoint of " + rec + " bytes");
        }
    }
}
