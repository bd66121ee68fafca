package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.container.Container;
import org.htod.core.container.Superblock;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A crash reopen in log mode reads the checkpoint, the log and a little metadata (superblock,
 * catalog, table headers and bucket directories), however many entries the store holds: counted
 * through a {@link CountingDevice} that sees the reads of the thread that opens (the flusher,
 * which starts at the end of the open, reads on its own account).
 *
 * <p>The default run holds 200,000 small entries (about 37 MB on the device; writing them takes
 * about 5 s on two cores); a run with {@code -Dhtod.test.scale} above 1 holds 1,000,000 (about
 * 166 MB, 20 s).
 */
class RecoveryReadBoundTest {
    private static final long LOG = 4L << 20;
    /** Superblock slots, catalog, table headers and directories: what the open reads besides the log and the checkpoint. */
    private static final long METADATA = 64L << 10;
    /** The log reader reads in windows of 1 MiB, the last of which may reach past the lap it needed. */
    private static final long LOG_WINDOW = 1L << 20;

    /** Counts the reads of one thread, passing every other call straight to the bytes. */
    private static final class OneThreadCounted extends ForwardingDevice {
        final CountingDevice counted;
        final Thread thread = Thread.currentThread();

        OneThreadCounted(BlockDevice bytes) {
            super(bytes);
            this.counted = new CountingDevice(bytes);
        }

        @Override
        public void read(long pos, ByteBuffer dst) {
            if (Thread.currentThread() == thread) {
                counted.read(pos, dst);
            } else {
                super.read(pos, dst);
            }
        }
    }

    @Test
    void aCrashReopenReadsTheLogAndTheCheckpointNotTheData() {
        int entries = LogStores.scale() > 1 ? 1_000_000 : 200_000;
        MemoryDevice disk = new MemoryDevice();
        // Written in direct mode, whose batches (putAll) are the fast way to a large store; the
        // first open in log mode starts its log with a checkpoint.
        try (HtodStore s = Htod.builder(disk).grain(64).logSize(LOG).directMode(true).durability(Durability.NONE)
                .open()) {
            HtodMap<Integer, Integer> m = s.map("big", Codec.ints(), Codec.ints());
            Map<Integer, Integer> batch = new HashMap<>();
            for (int i = 0; i < entries; i++) {
                batch.put(i, i);
                if (batch.size() == 8192 || i == entries - 1) {
                    m.putAll(batch);
                    batch.clear();
                }
            }
        }
        long dataBytes = disk.reopen().size();

        // In log mode: updates that fill part of the log, a checkpoint, more updates, a crash.
        CrashDevice crash = new CrashDevice(disk.reopen());
        HtodStore s = Htod.builder(crash).durability(Durability.SYNC).open();
        HtodMap<Integer, Integer> m = s.map("big", Codec.ints(), Codec.ints());
        HtodMap<String, String> small = s.map("small", Codec.string(), Codec.string());
        for (int i = 0; i < 2000; i++) {
            m.put(i * 97 % entries, -i);
            small.put("k" + i % 100, "v" + i);
        }
        s.checkpoint();
        for (int i = 2000; i < 4000; i++) {
            m.put(i * 97 % entries, -i);
        }
        crash.crash(7);
        LogStores.closeQuietly(s);

        long checkpointBytes;
        MemoryDevice look = disk.reopen();
        Superblock sb = Container.open(look).superblock();
        checkpointBytes = sb.snapshotLength();
        look.close();
        assertFalse(sb.clean());

        OneThreadCounted dev = new OneThreadCounted(disk.reopen());
        HtodStore again = Htod.builder(dev).open();
        IoCounts open = dev.counted.counts();
        try {
            String report = entries + " entries (" + dataBytes + " bytes on the device): the crash reopen read "
                    + open.bytesRead() + " bytes in " + open.reads() + " reads; log " + LOG + ", checkpoint "
                    + checkpointBytes + "; " + again.recoveryReport();
            System.out.println("RecoveryReadBoundTest: " + report);
            assertFalse(again.recoveryReport().clean(), report);
            assertTrue(again.recoveryReport().logDataRecords() > 0, "the log holds changes to replay: " + report);
            assertTrue(open.bytesRead() <= LOG + LOG_WINDOW + checkpointBytes + METADATA, report);
            assertTrue(open.bytesRead() * 8 < dataBytes, "far less than the data: " + report);
            HtodMap<Integer, Integer> m2 = again.map("big", Codec.ints(), Codec.ints());
            assertEquals(entries, m2.size());
            Map<Integer, Integer> updated = new HashMap<>();
            for (int i = 0; i < 4000; i++) {
                updated.put(i * 97 % entries, -i);
            }
            for (int k = 0; k < entries; k += 997) {
                assertEquals(updated.getOrDefault(k, k), m2.get(k), "key " + k);
            }
            for (Map.Entry<Integer, Integer> e : updated.entrySet()) {
                assertEquals(e.getValue(), m2.get(e.getKey()), "updated key " + e.getKey());
            }
        } finally {
            again.close();
        }
    }
}
