package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.log.LogReader;
import org.htod.core.log.Records;
import org.htod.table.HashtableOnDisk;
import org.htod.table.InstallRecord;
import org.junit.jupiter.api.Test;

/**
 * The flusher's install records against the log's record limit (an eighth of the lap), in the
 * smallest log that log mode takes (64 KiB: records of at most 7,776 bytes). A record over it is
 * refused by the log every time it is tried, and the flusher, which takes that for a fault of its
 * own, stops for good: the store refuses writes until it is opened again, though nothing is wrong
 * with the data. Two ways led there: commits that failed again and again, each retry recording
 * what the failed ones left waiting along with its own changes; and a doubling batch whose chains
 * are far longer than the load factor says (keys whose hashes share their low bits), whose unzip
 * relinks every entry of them. The flusher is stopped, and the tests run the installs and steps.
 */
class InstallRecordLimitTest {
    private static final long LOG = 64 << 10;

    private static HtodStore open(MemoryDevice disk, FaultyDevice faults) {
        return Htod.builder(faults != null ? faults : disk).grain(64).logSize(LOG).durability(Durability.NONE).open();
    }

    @Test
    void anInstallAfterManyFailedCommitsFitsTheLog() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        HtodStore s = open(disk, faults);
        Map<String, String> expected = new java.util.TreeMap<>();
        try {
            WriteLayer layer = LogStores.layer(s);
            layer.stopFlusherThread();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 200; i++) {
                m.put("k" + i, "v" + i);
                expected.put("k" + i, "v" + i);
            }
            // Each try fails at the commit's first sync (the heap's, before its record), and each
            // retry takes the same oldest keys again, replacing the entries the failed one made.
            int failed = 0;
            for (int i = 0; i < 16; i++) {
                faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
                assertThrows(HtodException.class, layer.installs::installOnce, "try " + i);
                failed++;
            }
            faults.heal();
            assertEquals(16, failed);
            while (layer.installs.installOnce()) {
                layer.installs.checkpointIfLogFills(); // every batch installed, none refused by the log
            }
            layer.installs.checkpoint(false);
            assertEquals(expected, LogStores.content(s).get("m").entrySet().stream()
                    .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey,
                            e -> e.getValue().substring(0, e.getValue().indexOf('@')), (a, b) -> a,
                            java.util.TreeMap::new)));
            LogStores.verify(s);
        } finally {
            s.close();
        }
        HtodStore again = open(disk.reopen(), null);
        try {
            HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertEquals(e.getValue(), m.get(e.getKey()), e.getKey());
            }
            LogStores.verify(again);
        } finally {
            again.close();
        }
    }

    /**
     * {@code n} keys whose hashes in table {@code t} agree in their low {@code bits} bits (one
     * bucket's chain while the table has at most 2^bits buckets), by pairs whose bit {@code bits}
     * differs, the lower first. Found with the table's own hash key, which only the store knows:
     * an outsider can craft such keys against a version-1 table's fixed seed only.
     */
    static List<String> collidingPairs(HashtableOnDisk t, int n, int bits) {
        List<String> lo = new ArrayList<>();
        List<String> hi = new ArrayList<>();
        long mask = (1L << bits) - 1;
        for (long i = 0; lo.size() < n / 2 || hi.size() < n / 2; i++) {
            String k = "c" + i;
            long h = t.hash(k.getBytes(StandardCharsets.UTF_8));
            if ((h & mask) == 0) {
                ((h & (1L << bits)) == 0 ? lo : hi).add(k);
            }
        }
        List<String> keys = new ArrayList<>(n);
        for (int i = 0; i < n / 2; i++) {
            keys.add(lo.get(i));
            keys.add(hi.get(i));
        }
        return keys;
    }

    @Test
    void aDoublingBatchOfOneLongChainFitsTheLog() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = open(disk, null);
        List<String> keys;
        try {
            WriteLayer layer = LogStores.layer(s);
            layer.stopFlusherThread();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            keys = collidingPairs(layer.map("m", false).table, 440, 9);
            // A pair at a time, each installed in bucket order (the higher bit last, so at the
            // chain's head), so that the chain alternates between the halves that the doubling
            // from 512 buckets to 1024 splits it into: that batch relinks every entry of it.
            for (int i = 0; i < keys.size(); i++) {
                m.put(keys.get(i), "v");
                if (i % 2 == 1) {
                    layer.installs.everything();
                }
            }
            layer.installs.everything();
            for (String k : keys) {
                assertEquals("v", m.get(k), k);
            }
            LogStores.verify(s);
        } finally {
            s.close();
        }
        HtodStore again = open(disk.reopen(), null);
        try {
            HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
            assertEquals(keys.size(), m.size());
            LogStores.verify(again);
        } finally {
            again.close();
        }
    }

    /**
     * A device that loses power at the first write into the log region at or past {@code from}
     * once armed: the write stays in flight, as {@link CrashDevice} keeps it, and the test
     * chooses which of its sectors land.
     */
    private static final class CutAtLogWrite extends ForwardingDevice {
        private final CrashDevice crash;
        private volatile long from = -1;

        CutAtLogWrite(CrashDevice crash) {
            super(crash);
            this.crash = crash;
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            long f = from;
            if (f >= 0 && pos + src.remaining() > f && LogStores.inLog(pos, LOG)) {
                from = -1;
                crash.armPowerCut(1, CrashDevice.Counting.WRITES, CrashDevice.CutWrite.IN_FLIGHT);
            }
            super.write(pos, src);
        }
    }

    /**
     * A crash while the doubling batch's install unit is written: part 0 cut short, part 0 whole
     * and part 1 cut short, or the unit whole. Replay leaves a unit cut short out whole (nothing
     * of it was written in place) and redoes a whole one as one record; either way the store
     * opens with every key and verifies.
     */
    @Test
    void aCrashInsideAnInstallUnitLeavesItOutWholeOrRedoesItWhole() throws Exception {
        for (int keepParts = 0; keepParts <= 2; keepParts++) {
            MemoryDevice disk = new MemoryDevice();
            CrashDevice crash = new CrashDevice(disk);
            CutAtLogWrite dev = new CutAtLogWrite(crash);
            HtodStore s = Htod.builder(dev).grain(64).logSize(LOG).durability(Durability.SYNC).open();
            List<Long> parts = new ArrayList<>();
            List<String> keys = List.of();
            int put = 0;
            try {
                WriteLayer layer = LogStores.layer(s);
                layer.stopFlusherThread();
                HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
                HashtableOnDisk table = layer.map("m", false).table;
                keys = collidingPairs(table, 440, 9);
                // Up to the doubling from 512 buckets to 1024 whose first batch splits the chain.
                while (!(table.doublingDue(2) && table.size() > 300)) {
                    m.put(keys.get(put++), "v");
                    m.put(keys.get(put++), "v");
                    layer.installs.everything();
                }
                m.put(keys.get(put++), "v");
                m.put(keys.get(put++), "v");
                long p0 = -1;
                layer.installLock().lock();
                try {
                    assertTrue(table.doublingStep(2), "the doubling's start"); // the new array
                    p0 = layer.log.end();
                    dev.from = LogStores.frameOffset(p0, layer.log.regionSize());
                    table.doublingStep(2); // the first batch: the chain of bucket 0
                    throw new AssertionError("the power cut never came");
                } catch (RuntimeException e) {
                    assertTrue(LogStores.causedByPowerCut(e), e.toString());
                } finally {
                    layer.installLock().unlock();
                }
                // The unit's records, read back from what the device was given (pending writes included).
                LogReader r = new LogReader(dev, org.htod.core.container.Superblock.LOG_OFFSET, LOG, layer.log.start(), 0);
                for (Records.Record rec = r.next(); rec != null; rec = r.next()) {
                    if (rec.type() == InstallRecord.PART_TYPE && rec.lsn() >= p0) {
                        parts.add(rec.lsn());
                    }
                }
                assertEquals(2, parts.size(), "the batch went out as a unit of two parts");
                long lap = layer.log.regionSize();
                // Keep the log's sectors before the frame holding the next part's start, and that
                // frame too when the part before it is to land whole.
                long limit = keepParts == 2 ? Long.MAX_VALUE
                        : LogStores.frameOffset(parts.get(keepParts) + (keepParts == 0 ? 600 : 0), lap);
                crash.crashKeeping(at -> !LogStores.inLog(at, LOG) || at <= limit);
            } finally {
                LogStores.closeQuietly(s);
            }
            HtodStore again = Htod.builder(disk.reopen()).grain(64).logSize(LOG).open();
            try {
                String detail = again.recoveryReport().detail();
                // Part 0 cut short is a torn tail the reader stops at; part 0 whole and part 1 cut
                // short is a unit the log's end cuts short.
                assertEquals(keepParts == 1, detail.contains("1 install unit cut short left out"),
                        "keeping " + keepParts + " parts: " + detail);
                HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
                for (String k : keys.subList(0, put)) {
                    assertEquals("v", m.get(k), k); // every put returned durable (SYNC)
                }
                assertEquals(put, m.size());
                LogStores.verify(again);
                again.checkpoint();
                LogStores.verify(again);
            } finally {
                again.close();
            }
        }
    }
}
