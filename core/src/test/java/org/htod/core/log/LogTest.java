package org.htod.core.log;

import static org.htod.core.log.TestRecords.payload;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/** The log: framing, laps and pads, group commit, power loss, failures and healing, back-pressure. */
class LogTest {
    private static final long REGION = 8192;
    private static final int DATA = 1;
    private static final int SCALE = Integer.getInteger("htod.test.scale", 1);

    private static Log log(BlockDevice dev, long regionBytes, long start, long end, long epoch) {
        return TestRecords.open(dev, REGION, regionBytes, start, end, epoch);
    }

    private static List<Long> readAll(BlockDevice dev, long start) {
        return readAll(dev, start, REGION * 4);
    }

    private static List<Long> readAll(BlockDevice dev, long start, long regionSize) {
        return TestRecords.readAll(dev, REGION, regionSize, start);
    }

    @Test
    void recordsReadBackInOrderAcrossLapsWithPads() {
        MemoryDevice dev = new MemoryDevice();
        Log log = log(dev, REGION * 4, 0, 0, 1);
        SplittableRandom r = new SplittableRandom(7);
        long released = 0;
        List<Long> live = new ArrayList<>();
        List<long[]> positions = new ArrayList<>();
        for (long id = 0; id < 2000; id++) {
            Log.Appended a = log.append(DATA, payload(id, 8 + r.nextInt(900)));
            log.awaitDurable(a);
            positions.add(new long[] {id, a.lsn()});
            live.add(id);
            // keep at most about two laps' worth of records live: release the older ones
            while (log.used() > REGION * 2) {
                positions.remove(0);
                live.remove(0);
                released = positions.get(0)[1];
                log.release(released);
            }
        }
        assertTrue(log.end() > REGION * 4 * 10, "the test wraps the region many times: " + log.end());
        assertEquals(live, readAll(dev, released));
    }

    @Test
    void groupCommitSharesSyncsAmongWriters() throws Exception {
        // A sync that takes a little while, as a disk's does: with an instant one, on a loaded
        // machine each writer may finish before the next is scheduled, and no group forms.
        CountingDevice dev = new CountingDevice(new ForwardingDevice(new MemoryDevice()) {
            @Override
            public void sync() {
                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                super.sync();
            }
        });
        Log log = log(dev, 1 << 20, 0, 0, 1);
        long syncsBefore = dev.counts().syncs(); // the log's preparation
        int threads = 16;
        int each = 200 * SCALE;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicBoolean releasing = new AtomicBoolean(true);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    go.await();
                    for (int i = 0; i < each; i++) {
                        log.awaitDurable(log.append(DATA, payload(id * 1_000_000L + i, 100)));
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            th.start();
            ts.add(th);
        }
        Thread releaser = new Thread(() -> {
            while (releasing.get()) {
                log.release(log.durable());
                Thread.onSpinWait();
            }
        });
        releaser.start();
        go.countDown();
        for (Thread th : ts) {
            th.join();
        }
        releasing.set(false);
        releaser.join();
        assertTrue(errors.isEmpty(), errors.toString());
        long records = (long) threads * each;
        long syncs = dev.counts().syncs() - syncsBefore;
        long[] groups = log.groupCounts();
        assertEquals(records, groups[1], "every record went out in some group");
        assertEquals(groups[0], syncs, "one sync per group");
        assertTrue(syncs <= records, syncs + " syncs for " + records + " records");
        // With 16 threads waiting at once most groups carry several records; only ask for some
        // sharing, which no scheduling can then prevent for long.
        assertTrue(syncs < records, syncs + " syncs for " + records + " records: no group carried two");
    }

    @Test
    void aLoneWriterCostsOneWriteAndOneSync() {
        CountingDevice dev = new CountingDevice(new MemoryDevice());
        Log log = log(dev, REGION * 4, 0, 0, 1);
        for (int i = 0; i < 50; i++) {
            long writes = dev.counts().writes();
            long syncs = dev.counts().syncs();
            log.awaitDurable(log.append(DATA, payload(i, 100)));
            assertEquals(1, dev.counts().writes() - writes, "record " + i);
            assertEquals(1, dev.counts().syncs() - syncs, "record " + i);
            log.release(log.durable());
        }
    }

    /** Records which calls reach the device: plain writes, syncs, and durable writes. */
    private static final class CallLog extends ForwardingDevice {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());

        CallLog(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            calls.add("write");
            super.write(pos, src);
        }

        @Override
        public void sync() {
            calls.add("sync");
            super.sync();
        }

        @Override
        public void writeDurable(long pos, ByteBuffer src) {
            calls.add("durable");
            inner.writeDurable(pos, src);
        }
    }

    @Test
    void aCommitAfterDurableRecordsIsOneDurableWriteAndSoIsAWriteAhead() {
        CallLog dev = new CallLog(new MemoryDevice());
        Log.format(dev, REGION, 4L << 20); // a region written whole once: the log never formats ahead
        Log log = log(dev, 4L << 20, 0, 0, 1);
        log.awaitDurable(log.append(DATA, payload(0, 100)));
        dev.calls.clear();
        log.awaitDurable(log.append(DATA, payload(1, 100)));
        assertEquals(List.of("durable"), dev.calls, "nothing before the record waits for a sync: its frames are written through");
        // More than the write-ahead threshold appended without a wait: written as one durable write.
        long id = 2;
        while (dev.calls.size() == 1) {
            log.append(DATA, payload(id++, 4000));
        }
        assertEquals(List.of("durable", "durable"), dev.calls, "the records beyond the threshold are written ahead, durably");
        dev.calls.clear();
        log.awaitDurable(log.append(DATA, payload(id, 100)));
        assertEquals(List.of("durable"), dev.calls, "and the next commit is one durable write again");
    }

    /**
     * A record that names data its writer wrote outside the log (a placed value) goes out after a
     * sync of the whole device, so that the data is durable before any frame of the record is
     * written; the commits after it are single durable writes again, and so is this one's write.
     */
    @Test
    void aRecordNamingOtherWritesGoesOutAfterASyncOfTheDevice() {
        CallLog dev = new CallLog(new MemoryDevice());
        Log.format(dev, REGION, 4L << 20);
        Log log = log(dev, 4L << 20, 0, 0, 1);
        log.awaitDurable(log.append(DATA, payload(0, 100)));
        dev.calls.clear();
        log.awaitDurable(log.tryAppend(DATA, payload(1, 100), true));
        assertEquals(List.of("sync", "durable"), dev.calls, "the device synced, then the frames written through");
        dev.calls.clear();
        log.awaitDurable(log.tryAppend(DATA, payload(2, 100), false));
        assertEquals(List.of("durable"), dev.calls, "the flag went with the write that took it");
        dev.calls.clear();
        log.awaitDurable(log.appendReserved(DATA, payload(3, 100), true));
        assertEquals(List.of("sync", "durable"), dev.calls, "the flusher's records may name other writes too");
        // Written ahead without a wait: the sync still comes before the frames.
        dev.calls.clear();
        log.tryAppend(DATA, payload(4, 100), true);
        long id = 5;
        while (dev.calls.isEmpty()) {
            log.append(DATA, payload(id++, 4000));
        }
        assertEquals(List.of("sync", "durable"), dev.calls, "written ahead, durably, after the device's sync");
        assertEquals(List.of(0L, 1L, 2L, 3L), readAll(dev, 0, 4L << 20).subList(0, 4));
    }

    /**
     * Records written ahead (more than {@code WRITE_AHEAD} bytes appended with no one waiting)
     * are durable once written, with no commit after them: recovery reads the log up to its first
     * gap, and a record reported kept must survive.
     */
    @Test
    void recordsWrittenAheadAreDurableWithoutACommit() {
        for (long seed = 0; seed < 20L * SCALE; seed++) {
            MemoryDevice disk = new MemoryDevice();
            CrashDevice dev = new CrashDevice(disk);
            Log.format(dev, REGION, 4L << 20);
            Log log = log(dev, 4L << 20, 0, 0, 1);
            long id = 0;
            for (long bytes = 0; bytes < Log.WRITE_AHEAD + 8000; bytes += 4000) { // past it, an append writes what is pending
                log.append(DATA, payload(id++, 4000));
            }
            dev.crash(seed); // no commit: what was written ahead, and no more, survives
            List<Long> read = readAll(disk, 0, 4L << 20);
            assertTrue((long) read.size() * Records.length(4000) >= Log.WRITE_AHEAD, "seed " + seed + ": the records written ahead survive, "
                    + read.size() + " of " + id);
            for (int i = 0; i < read.size(); i++) {
                assertEquals(i, read.get(i), "seed " + seed + ": in order");
            }
        }
    }

    @Test
    void everyAcknowledgedRecordSurvivesPowerLossAndTheTornTailIsCut() throws Exception {
        for (int round = 0; round < 60 * SCALE; round++) {
            long seed = 0x106_0000L + round;
            try {
                powerLoss(seed);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ": " + e, e);
            }
        }
    }

    @Test
    void powerLossWhileTheLogFormatsAheadOfItselfCutsOnlyItsTail() throws Exception {
        // A region of 8 MiB, still zero ahead of the log: blank frames are written (and synced)
        // ahead of the end as it goes, so that what power loss leaves is read as a tail, never
        // as a zeroed sector before written frames.
        for (int round = 0; round < 8 * SCALE; round++) {
            long seed = 0x10F_0000L + round;
            try {
                powerLoss(seed, 8 << 20, 40_000, 80); // at most about 6 MiB before the cut: the log never waits for room
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ": " + e, e);
            }
        }
    }

    private static void powerLoss(long seed) throws Exception {
        powerLoss(seed, 1 << 20, 1200, 60); // room for every record the run can append
    }

    private static void powerLoss(long seed, int regionBytes, int maxRecord, int maxWrites) throws Exception {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        Log log = log(dev, regionBytes, 0, 0, 1);
        dev.armCrashAfterWrites(1 + r.nextInt(maxWrites));
        List<Long> acked = Collections.synchronizedList(new ArrayList<>());
        List<Long> appended = Collections.synchronizedList(new ArrayList<>());
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int id = t;
            long sizesSeed = r.nextLong();
            Thread th = new Thread(() -> {
                SplittableRandom sr = new SplittableRandom(sizesSeed);
                try {
                    for (int i = 0; ; i++) {
                        long rid = id * 1_000_000L + i;
                        Log.Appended a;
                        synchronized (appended) {
                            a = log.append(DATA, payload(rid, 8 + sr.nextInt(maxRecord)));
                            appended.add(rid);
                        }
                        log.awaitDurable(a);
                        acked.add(rid);
                    }
                } catch (HtodException e) {
                    // power lost, or the log refuses after it
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
        dev.crash(seed);
        List<Long> read = readAll(disk, 0, regionBytes);
        // A prefix of the appends, in order, holding every acknowledged record.
        assertEquals(appended.subList(0, read.size()), read, "what survives is a prefix of the appends");
        for (long id : acked) {
            assertTrue(read.contains(id), "acknowledged record " + id + " survives");
        }
    }

    @Test
    void aFailedWriteDropsItsGroupAndHealingLetsAppendsGoOn() {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(disk);
        Log log = log(dev, REGION * 4, 0, 0, 1);
        Log.Appended lost = fiveDurableThenOneDropped(log, dev, FaultyDevice.Fault.DISK_FULL, true);
        assertTrue(log.failed());
        assertThrows(HtodException.class, () -> log.append(DATA, payload(6, 300)), "appends refused until healed");
        assertThrows(HtodException.class, log::heal, "the device still fails");
        dev.heal();
        assertEquals(lost.lsn(), log.heal());
        assertFalse(log.failed());
        log.awaitDurable(log.append(DATA, payload(7, 100)));
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 7L), readAll(disk, 0), "the dropped record is never read");
    }

    /**
     * Records 0 to 4 made durable, then record 5 dropped by the next sync's {@code fault}
     * (failing every later sync too with {@code sticky}); returns record 5.
     */
    private static Log.Appended fiveDurableThenOneDropped(Log log, FaultyDevice faults, FaultyDevice.Fault fault,
            boolean sticky) {
        for (int i = 0; i < 5; i++) {
            log.awaitDurable(log.append(DATA, payload(i, 300)));
        }
        faults.failSync(1, fault, sticky);
        Log.Appended lost = log.append(DATA, payload(5, 300));
        assertThrows(HtodException.class, () -> log.awaitDurable(lost));
        return lost;
    }

    /**
     * A sync that begins between a heal and the end of its relog returns only after the records
     * the relog appends are durable: the layer above acknowledged the dropped changes, and a sync
     * begun after them must cover them. It used to find the healed log with nothing pending and
     * return at once.
     */
    @Test
    void aSyncDuringTheRelogWaitsForItAndCoversIt() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(disk);
        Log log = log(dev, REGION * 4, 0, 0, 1);
        log.awaitDurable(log.append(DATA, payload(1, 300)));
        dev.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(HtodException.class, () -> log.awaitDurable(log.append(DATA, payload(2, 300))));
        dev.heal();
        java.util.concurrent.CountDownLatch relogging = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch goOn = new java.util.concurrent.CountDownLatch(1);
        long[] relogEnd = new long[1];
        Thread healer = new Thread(() -> log.heal(() -> {
            relogging.countDown();
            try {
                assertTrue(goOn.await(1, java.util.concurrent.TimeUnit.MINUTES));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            relogEnd[0] = log.append(DATA, payload(2, 300)).end(); // the dropped record, logged again
        }), "healer");
        healer.start();
        assertTrue(relogging.await(1, java.util.concurrent.TimeUnit.MINUTES));
        assertFalse(log.failed(), "healed, the relog under way");
        Thread syncing = new Thread(log::sync, "syncing");
        syncing.start();
        while (syncing.getState() != Thread.State.WAITING) {
            assertTrue(syncing.isAlive(), "the sync returned before the relog");
            Thread.sleep(1);
        }
        goOn.countDown();
        healer.join();
        syncing.join();
        assertTrue(log.durable() >= relogEnd[0], "the sync covered the relog");
        assertEquals(List.of(1L, 2L), readAll(disk, 0));
    }

    /**
     * A record made durable by one commit, whose writer looks only after a later commit failed:
     * it is told its record is durable, not dropped. Told otherwise, the flusher would record an
     * install again that the log already held, and a replay met its allocations twice.
     */
    @Test
    void aRecordDurableBeforeALaterFailureIsNotReportedDropped() {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(disk);
        Log log = log(dev, REGION * 4, 0, 0, 1);
        Log.Appended kept = log.append(DATA, payload(1, 300));
        log.sync(); // another writer's commit carries it
        dev.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        Log.Appended lost = log.append(DATA, payload(2, 300));
        assertThrows(HtodException.class, () -> log.awaitDurable(lost));
        log.awaitDurable(kept); // its writer looks now: durable all the same
        dev.heal();
        log.heal();
        log.awaitDurable(log.append(DATA, payload(3, 100)));
        assertEquals(List.of(1L, 3L), readAll(disk, 0));
    }

    /**
     * Records written ahead of any waiter (more than {@code WRITE_AHEAD} bytes appended, at ASYNC
     * or NONE) and a later group commit that fails: the records written ahead are durable, not
     * dropped, and their writers are told so. Written ahead without a sync, they were told their
     * records were dropped while the heal, which rewrites only from the failed write on, kept them
     * in the log for the next commit to make durable: a writer would log its change again (the
     * flusher an install twice, which a replay refuses).
     */
    @Test
    void aRecordWrittenAheadOfAFailedCommitIsNotReportedDropped() {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(disk);
        long region = 8L << 20;
        Log log = log(dev, region, 0, 0, 1);
        Log.Appended ahead = log.append(DATA, payload(1, 300));
        long id = 2;
        for (long bytes = 0; bytes < Log.WRITE_AHEAD + 8000; bytes += 4000) { // past it, an append writes what is pending
            log.append(DATA, payload(id++, 4000));
        }
        assertTrue(log.durable() >= ahead.end(), "written ahead, durably");
        dev.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        long lostId = id++;
        Log.Appended lost = log.append(DATA, payload(lostId, 300));
        assertThrows(HtodException.class, () -> log.awaitDurable(lost));
        dev.heal();
        log.heal();
        Log.Appended after = log.append(DATA, payload(id, 100));
        log.awaitDurable(ahead); // its writer looks now: still in the log, and made durable
        log.awaitDurable(after);
        List<Long> read = readAll(disk, 0, region);
        assertTrue(read.contains(1L), "the record written ahead survives: " + read.size() + " records");
        assertTrue(!read.contains(lostId) && read.get(read.size() - 1) == id, "the failed commit's record is gone");
    }

    /**
     * A writer whose record a failure dropped, looking only after the log healed, is told what
     * failed: the error carries the device's failure as its cause, as the leader's did.
     */
    @Test
    void aWriterThatLooksAfterTheHealIsToldWhatFailed() {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(disk);
        Log log = log(dev, REGION * 4, 0, 0, 1);
        Log.Appended first = log.append(DATA, payload(1, 300));
        Log.Appended second = log.append(DATA, payload(2, 300));
        dev.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        HtodException led = assertThrows(HtodException.class, () -> log.awaitDurable(first));
        dev.heal();
        log.heal();
        HtodException late = assertThrows(HtodException.class, () -> log.awaitDurable(second));
        assertTrue(late.getMessage().contains("dropped"), late.getMessage());
        assertTrue(late.getCause() != null && late.getMessage().contains("injected I/O error"),
                "the cause of the drop: " + late + ", the leader was told: " + led);
    }

    @Test
    void recordsOfAnEarlierEpochPastTheEndAreNotReplayed() {
        MemoryDevice disk = new MemoryDevice();
        Log first = log(disk, REGION * 4, 0, 0, 1);
        for (int i = 0; i < 10; i++) {
            first.awaitDurable(first.append(DATA, payload(i, 200)));
        }
        // Recovery found the stream ending after record 3 (say records 4.. were torn): a new
        // opening writes records of the same sizes from there, in a later epoch, and stops short.
        LogReader reader = new LogReader(disk, REGION, REGION * 4, 0, 0);
        for (int i = 0; i < 4; i++) {
            reader.next();
        }
        Log second = log(disk, REGION * 4, 0, reader.position(), 2);
        second.awaitDurable(second.append(DATA, payload(100, 200)));
        assertEquals(List.of(0L, 1L, 2L, 3L, 100L), readAll(disk, 0),
                "record 5 of epoch 1, whose position now follows record 100, is not taken");
    }

    @Test
    void aFullLogMakesWritersWaitForARelease() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        Log log = log(disk, REGION * 2, 0, 0, 1);
        long id = 0;
        long usable = log.regionSize() - log.reserve(); // the rest is the flusher's reserve
        int record = Records.length(500);
        while (usable - log.used() >= record) {
            log.append(DATA, payload(id++, 500));
        }
        log.sync();
        assertEquals(0, log.roomWaits()[0], "no append has waited yet");
        CountDownLatch appended = new CountDownLatch(1);
        long next = id;
        Thread w = new Thread(() -> {
            log.append(DATA, payload(next, 500));
            appended.countDown();
        });
        w.start();
        Thread.sleep(200); // a writer that could append would have done so by now
        assertEquals(1, appended.getCount(), "the writer waits while the log is full");
        log.release(log.durable());
        w.join(10_000);
        assertEquals(0, appended.getCount(), "a release lets it go on");
        assertEquals(1, log.roomWaits()[0], "its wait is counted");
        assertTrue(log.roomWaits()[1] > 0, "with the time it took");
        assertTrue(log.appendReserved(DATA, payload(-1, 500)).lsn() >= 0, "the reserve takes records beyond");
    }

    /**
     * A log filled to the lap by the flusher's records (the reserve taken whole) while its start
     * lies inside a frame: the frame holding the start is in use whole, so its bytes before the
     * start cannot take the newest records. Taken as free, they did: the last frame of the write
     * landed on the frame holding the start, and the stream read back from the start ended at
     * once, every durable record after it lost.
     */
    @Test
    void aFullLogKeepsTheFrameHoldingItsStart() {
        MemoryDevice disk = new MemoryDevice();
        Log log = log(disk, REGION * 4, 0, 0, 1);
        long lap = log.regionSize();
        log.awaitDurable(log.append(DATA, payload(0, 1080 - Records.HEADER)));
        log.release(1080); // inside the log's third frame (976 .. 1464)
        List<Long> written = new ArrayList<>();
        long id = 1;
        written.add(id);
        log.awaitDurable(log.append(DATA, payload(id++, 96 - Records.HEADER)));
        // The rest of the lap, to its end exactly; then records into the frames before the start.
        while (lap - log.end() >= 1000 + Records.HEADER) {
            written.add(id);
            log.appendReserved(DATA, payload(id++, 1000 - Records.HEADER));
        }
        written.add(id);
        log.appendReserved(DATA, payload(id++, (int) (lap - log.end()) - Records.HEADER));
        assertEquals(lap, log.end());
        assertEquals(1080, lap - log.used(), "bytes before the start");
        // A record that fits those bytes, not the 976 of the frames before the start's: it waits
        // for a release.
        long last = id;
        Thread w = new Thread(() -> log.appendReserved(DATA, payload(last, 1000 - Records.HEADER)));
        w.start();
        try {
            w.join(300);
            boolean waited = w.isAlive();
            log.sync();
            List<Long> read = readAll(disk, 1080);
            assertEquals(written, read.subList(0, Math.min(read.size(), written.size())),
                    "the records after the start, read back from it (" + read.size() + " read)");
            assertTrue(waited, "the record waits for room");
            log.release(log.durable());
            w.join();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        log.sync();
        assertEquals(List.of(last), readAll(disk, lap), "taken once the start moved on");
    }

    @Test
    void aWaitingWriterGivesUpOnlyWhenATryBegunAfterItsWaitFails() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        Log log = log(disk, REGION * 2, 0, 0, 1);
        long usable = log.regionSize() - log.reserve();
        long id = 0;
        while (usable - log.used() >= Records.length(500)) {
            log.append(DATA, payload(id++, 500));
        }
        log.sync();
        AtomicReference<Throwable> got = new AtomicReference<>();
        long next = id;
        Thread w = new Thread(() -> {
            try {
                log.append(DATA, payload(next, 500));
            } catch (Throwable t) {
                got.set(t);
            }
        });
        w.start();
        while (w.getState() != Thread.State.WAITING && w.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
        // The flusher's try that fails now may have begun before the writer waited (before space
        // returned, say): the writer waits for the next try.
        log.stall(new StoreFullException("the disk is full"));
        w.join(200);
        assertTrue(w.isAlive(), "one failure, perhaps of a try begun before the wait, does not end it: " + got.get());
        log.stall(new StoreFullException("the disk is full"));
        w.join(10_000);
        assertFalse(w.isAlive(), "a second failure, of a try begun while it waited, ends the wait");
        assertTrue(got.get() instanceof StoreFullException, String.valueOf(got.get()));
        log.unstall();
        log.release(log.durable());
        assertTrue(log.append(DATA, payload(next, 500)).lsn() >= 0, "room made: writes go on");
    }

    /**
     * An append waiting for room when a failed write drops the records that filled the log: the
     * room the failure made is not the append's to take, since the log refuses appends until it
     * heals. It used to take it: its record was appended into a failed log, its waiter (the
     * flusher's install record) told it had failed, and the record written all the same after the
     * heal, while the install it recorded was tried again with a second record of the same
     * allocations and frees, which a replay refuses.
     */
    @Test
    void anAppendWaitingForRoomIsRefusedWhenAFailureMakesTheRoom() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice dev = new FaultyDevice(disk);
        Log log = log(dev, REGION * 2, 0, 0, 1);
        long id = 0;
        while (log.regionSize() - log.used() >= 2 * Records.length(500)) {
            log.appendReserved(DATA, payload(id++, 500));
        }
        log.sync(); // durable up to here
        Log.Appended pending = log.appendReserved(DATA, payload(id++, 500)); // fills the log, not durable
        AtomicReference<Object> got = new AtomicReference<>();
        long next = id;
        Thread w = new Thread(() -> {
            try {
                got.set(log.appendReserved(DATA, payload(next, 500)));
            } catch (Throwable t) {
                got.set(t);
            }
        });
        w.start();
        while (w.getState() != Thread.State.WAITING && w.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
        dev.failWrite(1, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(HtodException.class, () -> log.awaitDurable(pending), "the write of the last record fails");
        w.join(10_000);
        assertFalse(w.isAlive(), "the failure ended the wait");
        assertTrue(got.get() instanceof HtodException, "refused, not appended into the failed log: " + got.get());
        log.heal();
        log.awaitDurable(log.appendReserved(DATA, payload(-1, 100)));
        List<Long> ids = readAll(disk, 0, REGION * 2);
        assertFalse(ids.contains(next), "the waiting append's record is nowhere in the log: " + ids);
        assertEquals(-1L, (long) ids.get(ids.size() - 1));
    }

    /** A device whose next sync, once armed, waits until the test lets it go on. */
    private static final class GatedSyncDevice extends ForwardingDevice {
        volatile CountDownLatch entered;
        volatile CountDownLatch gate;

        GatedSyncDevice(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void sync() {
            CountDownLatch g = gate;
            if (g != null) {
                gate = null;
                entered.countDown();
                try {
                    g.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            super.sync();
        }
    }

    /**
     * Two heals of one failure, the second waiting while the first writes: the second finds the
     * log healed and does nothing. Taking the lead after its wait without looking again, it
     * overwrote the range of a failure already healed, where records appended since may lie, and
     * moved the durable position back. (The write layer heals under its install lock, one at a
     * time; the log does not count on that.)
     */
    @Test
    void aHealThatWaitedForAnotherFindsTheLogHealed() throws Exception {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        GatedSyncDevice dev = new GatedSyncDevice(faults);
        Log log = log(dev, REGION * 4, 0, 0, 1);
        Log.Appended lost = fiveDurableThenOneDropped(log, faults, FaultyDevice.Fault.IO_ERROR, false);
        dev.entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        dev.gate = gate;
        AtomicReference<Object> first = new AtomicReference<>();
        AtomicReference<Object> second = new AtomicReference<>();
        Thread t1 = new Thread(() -> {
            try {
                first.set(log.heal(() -> log.awaitDurable(log.append(DATA, payload(6, 300)))));
            } catch (Throwable t) {
                first.set(t);
            }
        });
        t1.start();
        dev.entered.await(); // the first heal is in its sync, holding the lead
        Thread t2 = new Thread(() -> {
            try {
                second.set(log.heal());
            } catch (Throwable t) {
                second.set(t);
            }
        });
        t2.start();
        while (t2.getState() != Thread.State.WAITING && t2.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
        gate.countDown();
        t1.join(10_000);
        t2.join(10_000);
        assertEquals(lost.lsn(), first.get(), "the first heal, from the dropped record");
        assertEquals(-1L, second.get(), "the second finds nothing to heal");
        log.awaitDurable(log.append(DATA, payload(7, 100)));
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 6L, 7L), readAll(disk, 0), "the relogged record kept");
    }

    @Test
    void damageInTheMiddleIsRefusedWhileATornLastGroupEndsTheLog() {
        // Three groups of three records: the middle group's second record is damaged, and a
        // later group was written after it was synced: that is damage, not a tear.
        List<Log.Appended> at = new ArrayList<>();
        MemoryDevice damaged = threeGroups(at);
        flip(damaged, at.get(4).lsn() + 40);
        org.htod.core.CorruptStoreException e = assertThrows(org.htod.core.CorruptStoreException.class,
                () -> readAll(damaged, 0));
        assertTrue(e.getMessage().contains("CRC32C does not match"), e.getMessage());
        // A clean store's reader does not look past the end: its stream ends before the first
        // record with a byte in the damaged frame.
        LogReader plain = new LogReader(damaged, REGION, REGION * 4, 0, 0, false);
        int n = 0;
        while (plain.next() != null) {
            n++;
        }
        long damagedFrame = Frames.frameStart(at.get(4).lsn() + 40);
        assertEquals(at.stream().filter(a -> a.end() <= damagedFrame).count(), n,
                "without the scan the stream ends at the damaged frame");

        // The last group torn by power loss (its frames from the second record's on kept old)
        // ends the log there.
        at.clear();
        MemoryDevice torn = threeGroups(at);
        long lap = Frames.lap(REGION * 4);
        long firstLost = Frames.frameStart(at.get(7).lsn());
        ByteBuffer blank = ByteBuffer.allocate(Frames.FRAME);
        Frames.encode(blank, 0, Frames.BLANK, 0, ByteBuffer.allocate(0), 0, 0);
        for (long p = firstLost; p < at.get(8).end(); p += Frames.PAYLOAD) {
            torn.write(Frames.frameOffset(REGION, lap, p), blank.duplicate());
        }
        List<Long> read = readAll(torn, 0);
        assertTrue(read.equals(List.of(0L, 1L, 2L, 10L, 11L, 12L, 20L)) || read.equals(List.of(0L, 1L, 2L, 10L, 11L, 12L)),
                "the stream ends inside the last group: " + read);
    }

    @Test
    void damageInTheLastDurableGroupIsRefusedNotTakenForATornTail() {
        // Record CRCs alone cannot tell a flipped byte in the last group from a tear; the frames
        // can: a tear leaves whole frames, old or new, never one whose CRC fails.
        List<Log.Appended> at = new ArrayList<>();
        MemoryDevice flipped = threeGroups(at);
        flip(flipped, at.get(7).lsn() + 40);
        org.htod.core.CorruptStoreException e = assertThrows(org.htod.core.CorruptStoreException.class,
                () -> readAll(flipped, 0));
        assertTrue(e.getMessage().contains("CRC32C"), e.getMessage());

        // A sector of the last group zeroed: never a frame's state by right once the region is formatted.
        at.clear();
        MemoryDevice zeroed = threeGroups(at);
        long lap = Frames.lap(REGION * 4);
        zeroed.write(Frames.frameOffset(REGION, lap, at.get(7).lsn()), ByteBuffer.allocate(Frames.FRAME));
        e = assertThrows(org.htod.core.CorruptStoreException.class, () -> readAll(zeroed, 0));
        assertTrue(e.getMessage().contains("zeroed"), e.getMessage());

        // The region's last frames zeroed, the last group's among them: zeros run from there to
        // the region's end, as where a log never reached, but they follow a frame of records.
        MemoryDevice full = new MemoryDevice();
        Log log = log(full, REGION * 4, 0, 0, 1);
        List<Long> ids = new ArrayList<>();
        List<Long> lsns = new ArrayList<>();
        Log.Appended last = null;
        for (long id = 0; last == null || last.end() < lap - 3 * Frames.PAYLOAD; id++) {
            last = log.append(DATA, payload(id, 200));
            ids.add(id);
            lsns.add(last.lsn());
            log.sync();
            while (log.used() > REGION) { // what is released lets the log reach the region's end in its first lap
                ids.remove(0);
                lsns.remove(0);
                log.release(lsns.get(0));
            }
        }
        long from = lsns.get(0);
        assertEquals(ids, readAll(full, from));
        long firstZeroed = Frames.frameStart(last.lsn());
        full.write(Frames.frameOffset(REGION, lap, firstZeroed),
                ByteBuffer.allocate((int) ((lap - firstZeroed) / Frames.PAYLOAD * Frames.FRAME)));
        e = assertThrows(org.htod.core.CorruptStoreException.class, () -> readAll(full, from));
        assertTrue(e.getMessage().contains("after a frame of records"), e.getMessage());

        // The device cut inside the region.
        at.clear();
        MemoryDevice whole = threeGroups(at);
        long cut = Frames.frameOffset(REGION, lap, at.get(7).lsn()) + 100;
        MemoryDevice truncated = new MemoryDevice();
        ByteBuffer head = ByteBuffer.allocate((int) cut);
        whole.read(0, head);
        truncated.write(0, head.flip());
        e = assertThrows(org.htod.core.CorruptStoreException.class, () -> readAll(truncated, 0));
        assertTrue(e.getMessage().contains("the device ends"), e.getMessage());
    }

    @Test
    void theFirstLapIsFormattedToTheRegionsEndThoughItsStartMoved() {
        // The reader takes zeros after a frame of records for damage, so no record may land
        // before blank frames, up to the region's end, even once released records moved the
        // log's start and a lap from it lies past the region's end.
        int regionBytes = 4 << 20;
        MemoryDevice dev = new MemoryDevice();
        Log log = log(dev, regionBytes, 0, 0, 1);
        long lap = Frames.lap(regionBytes);
        Log.Appended last = appendReleasing(log, new ArrayList<>(), lap - 8 * Frames.PAYLOAD, 1 << 20);
        assertFormattedAhead(dev, lap, last.end(), lap);
    }

    @Test
    void aReopenedLogFormatsAheadThoughItsStartMovedInTheFirstLap() {
        // A log reopened with its start moved by released records, its region's end still zero,
        // goes on writing blank frames ahead of its end: a frame of records is never followed by
        // zeros, which the reader would take for damage (ProcessKillTest met it after SIGKILLs).
        int regionBytes = 4 << 20;
        long lap = Frames.lap(regionBytes);
        MemoryDevice dev = new MemoryDevice();
        Log first = log(dev, regionBytes, 0, 0, 1);
        List<Long> lsns = new ArrayList<>();
        appendReleasing(first, lsns, 1 << 20, 256 << 10);
        Log second = log(dev, regionBytes, first.start(), first.end(), 2);
        Log.Appended last = appendReleasing(second, lsns, 3 << 20, 256 << 10);
        assertFormattedAhead(dev, lap, last.end(), Math.min(lap, last.end() + FrameWriter.FORMAT_AHEAD / 4));
    }

    /**
     * Appends records of 4,000 bytes, each synced, until the log ends at {@code until} or
     * beyond, releasing the oldest of {@code lsns} (the live records' positions) while more than
     * {@code keep} bytes are live; returns the last.
     */
    private static Log.Appended appendReleasing(Log log, List<Long> lsns, long until, long keep) {
        Log.Appended last = null;
        while (last == null || last.end() < until) {
            last = log.append(DATA, payload(last == null ? lsns.size() : last.lsn(), 4000));
            lsns.add(last.lsn());
            log.sync();
            while (log.used() > keep) {
                lsns.remove(0);
                log.release(lsns.get(0));
            }
        }
        return last;
    }

    /** Every frame after the one holding stream position {@code end}, up to {@code to}, written and not zero. */
    private static void assertFormattedAhead(MemoryDevice dev, long lap, long end, long to) {
        ByteBuffer f = ByteBuffer.allocate(Frames.FRAME);
        for (long p = Frames.frameStart(end) + Frames.PAYLOAD; p < to; p += Frames.PAYLOAD) {
            long off = Frames.frameOffset(REGION, lap, p);
            assertTrue(off + Frames.FRAME <= dev.size(), "frame of position " + p + " ahead of the end " + end
                    + " was never written");
            dev.read(off, f.clear());
            assertFalse(Frames.allZero(f, 0, Frames.FRAME), "frame of position " + p + " ahead of the end " + end
                    + " is still zero");
        }
    }

    private static MemoryDevice threeGroups(List<Log.Appended> at) {
        MemoryDevice disk = new MemoryDevice();
        Log log = log(disk, REGION * 4, 0, 0, 1);
        for (int g = 0; g < 3; g++) {
            for (int i = 0; i < 3; i++) {
                at.add(log.append(DATA, payload(g * 10L + i, 200)));
            }
            log.sync();
        }
        return disk;
    }

    private static void flip(MemoryDevice dev, long position) {
        long off = Frames.byteOffset(REGION, Frames.lap(REGION * 4), position);
        ByteBuffer b = ByteBuffer.allocate(1);
        dev.read(off, b);
        b.put(0, (byte) (b.get(0) ^ 0x5A)).position(0);
        dev.write(off, b);
    }
}
