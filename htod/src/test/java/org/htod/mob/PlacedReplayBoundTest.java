package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.StoreStats;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Placed values (written into the heap at once, their records in the log naming them) of 8 KiB,
 * far more of them than the write buffer holds, then a crash: the reopen's replay puts back into
 * the buffer the values of the placed records since the last checkpoint, and that stays within
 * the buffer's bound. A placed record is some 90 bytes of log for a value of any size, so the log
 * filled, and checkpoints came, far too slowly: the replay put 16 times the buffer's bound into it
 * (891 MiB into a 64 MiB buffer at the defaults), more than some processes could hold.
 */
class PlacedReplayBoundTest {
    private static final long BUFFER = 1 << 20;

    @Test
    void theReplayAfterACrashKeepsTheBufferWithinItsBound() {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = Htod.builder(disk).grain(64).logSize(8L << 20).bufferSize(BUFFER).placeValuesFrom(4096)
                .durability(Durability.SYNC).open();
        MemoryDevice crashed;
        int n = 2_000;
        try {
            HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
            for (int i = 0; i < n; i++) {
                m.put(i, i + "x".repeat(8_192));
            }
            // As a crash leaves it: every put synced. Under the install lock, so that no install
            // or checkpoint writes while the copy is read (a copy mixing two moments is no crash).
            java.util.concurrent.locks.ReentrantLock install = LogStores.layer(s).installLock();
            install.lock();
            try {
                crashed = LogStores.copy(disk);
            } finally {
                install.unlock();
            }
        } finally {
            LogStores.closeQuietly(s);
        }
        try (HtodStore back = Htod.builder(crashed).grain(64).logSize(8L << 20).bufferSize(BUFFER).placeValuesFrom(4096)
                .open()) {
            StoreStats.WriteLayerFigures w = back.stats().writeLayer();
            assertTrue(w.bufferBytes() <= 2 * BUFFER, "the replay put " + w.bufferBytes() + " bytes into a buffer of "
                    + BUFFER + ": " + back.recoveryReport());
            HtodMap<Integer, String> m = back.map("m", Codec.ints(), Codec.string());
            for (int i = 0; i < n; i++) {
                assertEquals(i + "x".repeat(8_192), m.get(i), "key " + i);
            }
            assertEquals(n, m.size());
            assertEquals((n - 1) + "x".repeat(8_192), m.get(n - 1));
        }
    }
}
