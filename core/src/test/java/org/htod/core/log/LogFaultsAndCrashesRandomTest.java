package org.htod.core.log;

import static org.htod.core.log.TestRecords.payload;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Random appends, commits, releases, failed writes and syncs with their heals, and power cuts at
 * any write or sync (a heal's included), each followed by a reopen as a store's makes it: read
 * from the start, a new epoch above every one read, the log continued at the end found. Checked
 * against a model after every crash: what is read back is, in order, a prefix of the records
 * appended and not dropped, holding every acknowledged one, and nothing a healed failure dropped.
 */
class LogFaultsAndCrashesRandomTest {
    private static final long REGION = 8192;
    private static final int DATA = 1;
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);

    @Test
    void acknowledgedRecordsSurviveFailuresHealsAndPowerCuts() {
        for (int round = 0; round < 100 * SCALE; round++) {
            long seed = 0x4EA1_0000L + round;
            try {
                run(seed);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ": " + e, e);
            }
        }
    }

    /** One appended record of the model: its id, where it starts, and its generation. */
    private record Rec(long id, Log.Appended at) {}

    private static void run(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long regionBytes = REGION * (4 + r.nextInt(5)); // a few laps in a run
        MemoryDevice disk = new MemoryDevice();
        long start = 0;
        long sbEpoch = 1;
        long end = 0;
        long epoch = 1;
        List<long[]> survivors = new ArrayList<>(); // records of earlier openings read back: id, position
        long nextId = 0;
        for (int opening = 0; opening < 5; opening++) {
            CrashDevice crash = new CrashDevice(disk.reopen());
            FaultyDevice faults = new FaultyDevice(crash);
            Log log = TestRecords.open(faults, REGION, regionBytes, start, end, epoch);
            sbEpoch = epoch; // as an opening writes its superblock
            // This opening's records in order; those a failure dropped leave once its heal is done.
            List<Rec> live = new ArrayList<>();
            Set<Long> acked = new HashSet<>();
            crash.armPowerCut(1 + r.nextInt(80), CrashDevice.Counting.WRITES_AND_SYNCS,
                    r.nextBoolean() ? CrashDevice.CutWrite.LOST : CrashDevice.CutWrite.IN_FLIGHT);
            for (int op = 0; op < 300 && !crash.powerCut(); op++) {
                try {
                    if (log.failed()) {
                        if (r.nextInt(4) > 0) {
                            faults.heal(); // else the heal may fail again
                        }
                        log.heal();
                        live.removeIf(x -> log.dropped(x.at().lsn(), x.at().generation()));
                        continue;
                    }
                    int what = r.nextInt(100);
                    if (what < 60) {
                        int size = r.nextInt(4) == 0 ? 8 + r.nextInt(24) : 8 + r.nextInt((int) log.maxPayload() / 2);
                        if (log.used() + size + 2 * Records.HEADER + 2 * Frames.PAYLOAD + log.reserve()
                                > log.regionSize()) {
                            log.sync();
                            for (Rec x : live) {
                                acked.add(x.id());
                            }
                            log.release(log.durable());
                            start = log.durable();
                            sbEpoch = log.epoch();
                            continue;
                        }
                        Log.Appended a = log.append(DATA, payload(nextId, size));
                        live.add(new Rec(nextId++, a));
                        if (r.nextBoolean()) {
                            log.awaitDurable(a);
                            for (Rec x : live) {
                                if (x.at().end() <= a.end()) {
                                    acked.add(x.id());
                                }
                            }
                        }
                    } else if (what < 75) {
                        log.sync();
                        for (Rec x : live) {
                            acked.add(x.id());
                        }
                    } else if (what < 85) {
                        // a checkpoint: the start moves to the durable end
                        long to = log.durable();
                        if (to > start) {
                            log.release(to);
                            start = to;
                            sbEpoch = log.epoch();
                        }
                    } else if (r.nextBoolean()) {
                        faults.failWrite(1 + r.nextInt(3), FaultyDevice.Fault.IO_ERROR, false);
                    } else {
                        faults.failSync(1 + r.nextInt(3), FaultyDevice.Fault.IO_ERROR, false);
                    }
                } catch (HtodException e) {
                    if (!crash.powerCut() && !log.failed() && !e.getMessage().contains("injected")) {
                        throw e;
                    }
                }
            }
            // Power lost (at the cut, or now): a record a failure dropped and no heal overwrote
            // may still be read back, after the durable ones, as the model keeps it.
            crash.crash(r.nextLong());
            LogReader reader = new LogReader(disk.reopen(), REGION, regionBytes, start, 0);
            List<long[]> read = new ArrayList<>();
            for (Records.Record rec = reader.next(); rec != null; rec = reader.next()) {
                read.add(new long[] {TestRecords.checkedId(rec), rec.lsn()});
            }
            List<Long> expected = new ArrayList<>();
            for (long[] x : survivors) {
                if (x[1] >= start) {
                    expected.add(x[0]);
                }
            }
            for (Rec x : live) {
                if (x.at().lsn() >= start) {
                    expected.add(x.id());
                }
            }
            List<Long> readIds = new ArrayList<>();
            for (long[] x : read) {
                readIds.add(x[0]);
            }
            assertTrue(readIds.size() <= expected.size() && expected.subList(0, readIds.size()).equals(readIds),
                    "opening " + opening + ": read " + readIds + ", a prefix of " + expected + " expected");
            for (long id : acked) {
                if (expected.contains(id)) {
                    assertTrue(readIds.contains(id), "opening " + opening + ": acknowledged record " + id
                            + " survives; read " + readIds);
                }
            }
            survivors = read;
            end = reader.position();
            epoch = Math.max(sbEpoch, Math.max(reader.epoch(), reader.highestFrameEpoch())) + 1;
        }
    }
}
