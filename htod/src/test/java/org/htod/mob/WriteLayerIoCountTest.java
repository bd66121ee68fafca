package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * What the write layer saves in device I/O, counted: group commit shares a sync among the
 * writers that wait at the same time, and the write buffer absorbs repeated updates of a key
 * before the flusher installs it.
 */
class WriteLayerIoCountTest {

    /** A device whose sync takes a millisecond, as a disk's does: writers arriving meanwhile gather for the next. */
    private static final class SlowSync extends ForwardingDevice {
        SlowSync(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void sync() {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            super.sync();
        }
    }

    @Test
    void sixtyFourSyncWritersShareTheirSyncs() throws InterruptedException {
        int threads = 64;
        int perThread = 50 * LogStores.scale();
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk);
        CountingDevice dev = new CountingDevice(new SlowSync(crash));
        HtodStore s = Htod.builder(dev).grain(64).logSize(4 << 20).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        WriteLayer layer = LogStores.layer(s);
        long[] groupsBefore = layer.log.groupCounts();
        dev.reset();
        List<Thread> ts = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            Thread th = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    m.put("t" + me + "-" + i, "v" + i);
                }
            });
            th.setUncaughtExceptionHandler((x, e) -> failures.add(e));
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join(120_000);
            assertTrue(!th.isAlive(), "a writer hangs");
        }
        assertTrue(failures.isEmpty(), "writers failed: " + failures);
        IoCounts c = dev.counts();
        long[] groups = layer.log.groupCounts();
        long puts = (long) threads * perThread;
        long commits = groups[0] - groupsBefore[0];
        String report = puts + " puts by " + threads + " threads at SYNC: " + c.syncs() + " syncs, " + c.writes()
                + " writes; " + commits + " group commits carrying " + (groups[1] - groupsBefore[1]) + " records";
        System.out.println("WriteLayerIoCountTest: " + report);
        assertTrue(c.syncs() <= puts / 4, report);
        assertTrue(commits <= puts / 4, report);
        assertTrue(commits > 0 && c.syncs() >= commits, report);

        // Every put returned at SYNC: a power cut now, keeping none of the unsynced writes, loses none.
        crash.crash(42);
        LogStores.closeQuietly(s);
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> m2 = again.map("m", Codec.string(), Codec.string());
            assertEquals(puts, m2.size());
            for (int t = 0; t < threads; t++) {
                for (int i = 0; i < perThread; i++) {
                    assertEquals("v" + i, m2.get("t" + t + "-" + i));
                }
            }
            LogStores.verify(again);
        }
    }

    @Test
    void aThousandUpdatesOfOneKeyMakeAHandfulOfInstalls() {
        MemoryDevice disk = new MemoryDevice();
        CountingDevice dev = new CountingDevice(disk);
        HtodStore s = Htod.builder(dev).grain(64).logSize(4 << 20).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("hot", Codec.string(), Codec.string());
        WriteLayer layer = LogStores.layer(s);
        long[] buffered = layer.mob.counts();
        dev.reset();
        int updates = 1000;
        for (int i = 0; i < updates; i++) {
            m.put("key", "value " + i);
        }
        IoCounts c = dev.counts();
        long[] absorbed = layer.mob.counts();
        s.close(); // installs what the buffer holds, then the flusher stops: its counters are final
        WriteLayer.Stats st = layer.stats();
        String report = updates + " updates of one key: " + st.installs + " installs of " + st.installedKeys + " keys, "
                + (absorbed[1] - buffered[1]) + " updates absorbed in the buffer; " + c.syncs() + " syncs and " + c.writes()
                + " writes before the close";
        System.out.println("WriteLayerIoCountTest: " + report);
        assertTrue(st.installedKeys >= 1, report);
        assertTrue(st.installedKeys <= 5, report);
        assertTrue(absorbed[1] - buffered[1] >= updates - 5, report);
        // Each update at SYNC is one log write and one sync; the tables see almost none of them.
        assertTrue(c.writes() <= updates + 50, report);
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> m2 = again.map("hot", Codec.string(), Codec.string());
            assertEquals("value " + (updates - 1), m2.get("key"));
            assertEquals(updates, m2.version("key"));
            LogStores.verify(again);
        }
    }

    /**
     * A writer that never pauses, across the flusher's periodic passes: each pass installs what
     * was buffered when it began, in large batches. A pass that chased the writer instead never
     * ended, installing the few keys written during each install, every one a sync and a log
     * record of its own, with nothing left to absorb.
     */
    @Test
    void aSteadyWriterIsInstalledInLargeBatchesNotChased() {
        CountingDevice dev = new CountingDevice(new SlowSync(new MemoryDevice()));
        HtodStore s = Htod.builder(dev).grain(64).logSize(16 << 20).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        WriteLayer layer = LogStores.layer(s);
        long installsBefore = layer.stats().installs;
        // Long enough for at least two periodic passes (one a second after the last).
        long until = System.nanoTime() + 2_500_000_000L;
        int puts = 0;
        while (System.nanoTime() < until) {
            m.put("k" + puts % 5000, "v" + puts);
            puts++;
        }
        WriteLayer.Stats st = layer.stats();
        long installs = st.installs - installsBefore;
        String report = puts + " puts at SYNC in 2.5 s: " + installs + " installs of " + st.installedKeys + " keys, "
                + dev.counts().syncs() + " syncs";
        System.out.println("WriteLayerIoCountTest: " + report);
        assertTrue(installs >= 1, "a periodic pass installed nothing: " + report);
        assertTrue(installs <= 10, report);
        LogStores.closeQuietly(s);
    }

    /**
     * A lone writer whose log, not its buffer, fills: once a periodic pass has installed what was
     * buffered when it began, the flusher installs again only when the changes it has not
     * installed take a quarter of the log, and a checkpoint releases the log at a third. When it
     * went by the used log instead, which stays above a quarter until the next checkpoint however
     * much is installed, a pass that found the log between a quarter and a third chased the
     * writer: it installed the few keys written during each install, every install a heap sync
     * and a log record, until the log reached a third (a 4,000-byte-value writer: 584 installs of
     * 61 keys each in 40,000 puts; now 10).
     */
    @Test
    void aLoneWriterFillingTheLogIsNotChasedBetweenCheckpoints() {
        CountingDevice dev = new CountingDevice(new SlowSync(new MemoryDevice()));
        // With a sync a millisecond, a quarter of this log takes the writer over a second, so
        // periodic passes (one a second after the last) come while the log fills.
        HtodStore s = Htod.builder(dev).grain(64).logSize(8 << 20).durability(Durability.SYNC).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        WriteLayer layer = LogStores.layer(s);
        WriteLayer.Stats st = layer.stats();
        long installsBefore = st.installs;
        long keysBefore = st.installedKeys;
        String value = "v".repeat(2000);
        int puts = 3000;
        for (int i = 0; i < puts; i++) {
            m.put("k" + i, value);
        }
        long installs = st.installs - installsBefore;
        long keys = st.installedKeys - keysBefore;
        String report = puts + " puts of 2,000 bytes into an 8 MiB log: " + installs + " installs of " + keys
                + " keys, " + st.checkpoints + " checkpoints, " + dev.counts().syncs() + " syncs";
        System.out.println("WriteLayerIoCountTest: " + report);
        assertTrue(keys >= puts / 3, "the flusher kept up with the log: " + report);
        assertTrue(installs <= 20, report);
        LogStores.closeQuietly(s);
    }

    /**
     * A load of new keys, faster than the flusher installs them: the tables are doubled ahead of
     * the keys an install adds. With both caches off, every entry a walk or a doubling meets and
     * every bucket slot is a device read. Before, the flusher ran one doubling step per install
     * of up to 4,096 keys, into a table sized for what it held before the install, so chains grew
     * with the load and every put and install walked them: this load read 117 times per put (65 for 150,000 objects of 1 to 6 KiB
     * in a file, with the caches on); now about 5.5.
     */
    @Test
    void aLoadOfNewKeysWalksChainsAsShortAsTheLoadFactorSays() {
        MemoryDevice disk = new MemoryDevice();
        CountingDevice dev = new CountingDevice(disk);
        HtodStore s = Htod.builder(dev).grain(64).logSize(16 << 20).cacheSize(0).bufferSize(8 << 20)
                .durability(Durability.NONE).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        int puts = 30_000;
        String value = "v".repeat(200);
        dev.reset();
        for (int from = 0; from < puts; from += 500) {
            java.util.Map<String, String> batch = new java.util.LinkedHashMap<>();
            for (int i = from; i < from + 500; i++) {
                batch.put("key-" + i, value);
            }
            m.putAll(batch);
        }
        s.close(); // installs what the buffer holds
        IoCounts c = dev.counts();
        String report = puts + " new keys put in batches of 500, caches off: " + c.reads() + " device reads ("
                + String.format("%.1f", c.reads() / (double) puts) + " a put)";
        System.out.println("WriteLayerIoCountTest: " + report);
        assertTrue(c.reads() <= 8L * puts, report);
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> m2 = again.map("m", Codec.string(), Codec.string());
            assertEquals(puts, m2.size());
            assertEquals(value, m2.get("key-" + (puts - 1)));
        }
    }

    /**
     * A load into a fresh store: the flusher's first install finds an empty table of 64 buckets
     * and thousands of new keys buffered for it. The table grows to their size in one step (one
     * install record, made durable), not by seven doublings of three steps each from 64 buckets to
     * 8,192. The flusher may install part of the load on its own before the checkpoint does the
     * rest (after a second idle); then one ordinary doubling follows: at most four steps in all.
     */
    @Test
    void aLoadIntoAFreshStoreGrowsItsEmptyTableInOneStep() {
        MemoryDevice disk = new MemoryDevice();
        CountingDevice dev = new CountingDevice(disk);
        HtodStore s = Htod.builder(dev).grain(64).durability(Durability.NONE).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        int puts = 6_000;
        for (int i = 0; i < puts; i++) {
            m.put("key-" + i, "value-" + i);
        }
        long stepsBefore = s.stats().writeLayer().doublingSteps();
        long syncsBefore = dev.counts().syncs();
        s.checkpoint(); // installs everything buffered
        long steps = s.stats().writeLayer().doublingSteps();
        String report = puts + " new keys: " + steps + " doubling steps (" + stepsBefore + " before the checkpoint), "
                + (dev.counts().syncs() - syncsBefore) + " syncs in the checkpoint";
        System.out.println("WriteLayerIoCountTest: " + report);
        assertTrue(steps >= 1 && steps <= 4, report);
        assertTrue(s.verify().ok(), report);
        s.close();
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            HtodMap<String, String> m2 = again.map("m", Codec.string(), Codec.string());
            assertEquals(puts, m2.size());
            for (int i = 0; i < puts; i += 97) {
                assertEquals("value-" + i, m2.get("key-" + i));
            }
        }
    }
}
