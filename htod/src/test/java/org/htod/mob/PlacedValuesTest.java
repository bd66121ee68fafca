package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.CorruptStoreException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.device.MemoryDevice;
import org.htod.core.log.Log;
import org.junit.jupiter.api.Test;

/**
 * Placed values ({@code placeValuesFrom}): a large value's entry is written into the heap by its
 * writer and the log record names the block, so the value reaches the disk once; replaced blocks
 * go back; a crash reopen reads the values back from their blocks and takes the blocks back; a
 * block that does not hold its entry refuses the open. I/O is counted, never timed.
 */
class PlacedValuesTest {
    private static final int VALUE = 4000;
    /** A value placed in a block as small as a small store's checkpoint's. */
    private static final int SMALL = 200;

    static Htod.Builder builder(BlockDevice dev, int placeFrom) {
        return Htod.builder(dev).grain(64).logSize(8 << 20).bufferSize(32 << 20).durability(Durability.SYNC)
                .placeValuesFrom(placeFrom);
    }

    private static String value(int i, int length) {
        StringBuilder b = new StringBuilder(length);
        b.append(i).append(':');
        while (b.length() < length) {
            b.append((char) ('a' + (b.length() * 7 + i) % 26));
        }
        return b.toString();
    }

    /** Bytes written per put of {@code puts} 4,000-byte values to distinct keys, the close's installs included. */
    private static long bytesPerPut(int placeFrom, int puts) {
        MemoryDevice disk = new MemoryDevice();
        CountingDevice dev = new CountingDevice(disk);
        HtodStore s = builder(dev, placeFrom).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        dev.reset();
        for (int i = 0; i < puts; i++) {
            m.put("k" + i, value(i, VALUE));
        }
        s.close();
        IoCounts c = dev.counts();
        try (HtodStore again = builder(disk.reopen(), placeFrom).open()) {
            HtodMap<String, String> m2 = again.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < puts; i++) {
                assertEquals(value(i, VALUE), m2.get("k" + i));
            }
            LogStores.verify(again);
        }
        return c.bytesWritten() / puts;
    }

    @Test
    void aLargeValueReachesTheDiskOnce() {
        int puts = 600;
        long inline = bytesPerPut(0, puts);
        long placed = bytesPerPut(1024, puts);
        String report = "bytes written per put of a " + VALUE + "-byte value: " + inline + " in the log and installed, "
                + placed + " placed";
        System.out.println("PlacedValuesTest: " + report);
        assertTrue(inline > 2 * VALUE, report);
        assertTrue(placed < VALUE * 3 / 2, report);
        assertTrue(placed * 10 < inline * 7, report);
    }

    @Test
    void updatesOfOneKeyGiveTheirReplacedBlocksBack() {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = builder(disk, 1024).open();
        HtodMap<String, String> m = s.map("hot", Codec.string(), Codec.string());
        m.put("warm", value(0, VALUE));
        long before = s.stats().space().allocatedBlocks();
        int updates = 1000;
        for (int i = 0; i < updates; i++) {
            m.put("key", value(i, VALUE));
        }
        long after = s.stats().space().allocatedBlocks();
        // At SYNC a replaced block's replacing record is durable at once: it goes back at once.
        assertTrue(after - before <= 4, "allocated blocks went from " + before + " to " + after + " over " + updates
                + " updates of one key");
        s.close();
        try (HtodStore again = builder(disk.reopen(), 1024).open()) {
            HtodMap<String, String> m2 = again.map("hot", Codec.string(), Codec.string());
            assertEquals(value(updates - 1, VALUE), m2.get("key"));
            assertEquals(updates, m2.version("key"));
            LogStores.verify(again);
        }
    }

    /**
     * A {@code WriteBatch} that replaces placed values gives their blocks back as a single write
     * does: at SYNC once it returns, its record durable. It left them to the next single write or
     * install, so that a store written by batches held every value they replaced until then. The
     * flusher is stopped, so that it takes none of the values first.
     */
    @Test
    void aBatchThatReplacesPlacedValuesGivesTheirBlocksBackAtOnce() throws Exception {
        try (HtodStore s = builder(new MemoryDevice(), 1024).open()) {
            WriteLayer layer = LogStores.layer(s);
            layer.stopFlusherThread();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put("a", value(1, VALUE));
            m.put("b", value(2, VALUE));
            int unrecorded = layer.heap.unrecorded().count();
            try (org.htod.WriteBatch b = s.batch()) {
                b.put(m, "a", "small");
                b.remove(m, "b");
                b.commit();
            }
            assertEquals(0, layer.installs.replaced.waiting(), "replaced blocks held after the batch returned");
            assertEquals(unrecorded - 2, layer.heap.unrecorded().count(), "the two replaced blocks given back");
            assertEquals("small", m.get("a"));
            assertEquals(null, m.get("b"));
        }
    }

    /**
     * At NONE a replaced placed value's block waits for its replacing record to be durable; the
     * store's {@code sync()} makes it so, and gives the block back then, not at the next write or
     * install (an application that syncs and then stops writing kept the blocks until it wrote).
     */
    @Test
    void aSyncAtNoneGivesBackTheBlocksOfReplacedPlacedValues() throws Exception {
        try (HtodStore s = builder(new MemoryDevice(), 1024).durability(Durability.NONE).open()) {
            WriteLayer layer = LogStores.layer(s);
            layer.stopFlusherThread();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put("a", value(1, VALUE));
            m.put("b", value(2, VALUE));
            s.sync();
            int unrecorded = layer.heap.unrecorded().count();
            m.put("a", "small");
            m.remove("b");
            assertEquals(2, layer.installs.replaced.waiting(), "replaced blocks wait for their records at NONE");
            s.sync();
            assertEquals(0, layer.installs.replaced.waiting(), "replaced blocks held after sync() returned");
            assertEquals(unrecorded - 2, layer.heap.unrecorded().count(), "the two replaced blocks given back");
            assertEquals("small", m.get("a"));
            assertEquals(null, m.get("b"));
        }
    }

    /**
     * An install after one whose commit failed first commits what the failed one left, alone;
     * the placed blocks it installs must not be in that record, which does not link them. They
     * were: recorded before the leftovers were committed, they were allocated by a durable record
     * that no table's links followed, and a crash before the install's own record left them
     * allocated and unreached. The verifier called them leaked, and a block whose key changed
     * again before its install was never freed. The second install fails at each of its syncs in
     * turn, and the device as it is then (every write landed) must reopen sound.
     */
    @Test
    void placedBlocksAreNotRecordedWithTheLeftoversOfAFailedCommit() throws Exception {
        int met = 0;
        for (int k = 1; k <= 12; k++) {
            MemoryDevice disk = new MemoryDevice();
            FaultyDevice faults = new FaultyDevice(disk);
            MemoryDevice crashed;
            try (HtodStore s = builder(faults, 1024).open()) {
                WriteLayer layer = LogStores.layer(s);
                layer.stopFlusherThread();
                HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
                m.put("a", "small");
                faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
                assertThrows(org.htod.core.HtodException.class, layer.installs::installOnce, "the first install");
                faults.heal();
                m.put("p", value(1, VALUE)); // placed
                faults.failSync(k, FaultyDevice.Fault.IO_ERROR, false);
                try {
                    layer.installs.installOnce();
                } catch (org.htod.core.HtodException e) {
                    met++;
                }
                crashed = LogStores.copy(disk); // a power cut now, every write landed
                faults.heal();
            }
            try (HtodStore again = builder(crashed, 1024).open()) {
                org.htod.VerifyReport r = again.verify();
                assertTrue(r.ok(), "the second install failed at its sync " + k + ": " + r);
                HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
                assertEquals("small", m.get("a"));
                assertEquals(value(1, VALUE), m.get("p"));
            }
        }
        assertTrue(met >= 2, "installs that met the fault: " + met);
    }

    /**
     * Churn at NONE, where nothing makes a replacing record durable but the flusher: the blocks
     * of replaced values go back all the same (the flusher syncs the log when they pile up), and
     * new blocks reuse the space, so the heap holds what is live, the buffer's placed values
     * beside their installed entries, and a little more; not what was written.
     */
    @Test
    void churnAtNoneKeepsTheHeapInProportion() {
        MemoryDevice disk = new MemoryDevice();
        long buffer = 8 << 20;
        try (HtodStore s = builder(disk, 1024).bufferSize(buffer).durability(Durability.NONE).open()) {
            HtodMap<Long, byte[]> m = s.map("m", Codec.longs(), Codec.bytes());
            java.util.SplittableRandom r = new java.util.SplittableRandom(0x91ace);
            int[] sizes = new int[2000];
            long live = 0;
            long written = 0;
            for (int op = 1; op <= 40_000; op++) {
                int k = r.nextInt(sizes.length);
                int len = 1024 + r.nextInt(6000);
                byte[] v = new byte[len];
                java.util.Arrays.fill(v, (byte) op);
                m.put((long) k, v);
                live += len - sizes[k];
                sizes[k] = len;
                written += len;
            }
            s.checkpoint();
            org.htod.StoreStats.Space space = s.stats().space();
            String report = "the heap takes " + space.heapUsedBytes() + " bytes for " + live + " bytes of values, "
                    + written + " written: " + space;
            System.out.println("PlacedValuesTest: " + report);
            assertTrue(space.heapUsedBytes() < 3 * live + 2 * buffer, report);
            LogStores.verify(s);
        }
    }

    /**
     * At NONE a replaced value's block stays allocated until the record that replaced it is
     * durable: a crash may lose that record, and then the replaced value is its key's last again,
     * read from its block. Given back at once, the block went to the next value placed.
     */
    @Test
    void aReplacedBlockStaysUntilTheRecordThatReplacedItIsDurable() {
        for (int attempt = 0; attempt < 20; attempt++) {
            MemoryDevice disk = new MemoryDevice();
            HtodStore s = builder(disk, 1024).durability(Durability.NONE).open();
            MemoryDevice copy;
            try {
                HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
                WriteLayer layer = LogStores.layer(s);
                m.put("k", value(1, VALUE));
                s.sync();
                long installs = layer.stats().installs;
                long durable = layer.log.durable();
                m.put("k", value(2, VALUE)); // its record waits in memory: NONE
                m.put("j", value(3, VALUE)); // a block of the same size: not the one "k" had
                copy = LogStores.copy(disk);
                if (layer.stats().installs != installs || layer.log.durable() != durable) {
                    continue; // the flusher installed or synced meanwhile: try again
                }
            } finally {
                LogStores.closeQuietly(s);
            }
            try (HtodStore again = builder(copy, 1024).open()) {
                HtodMap<String, String> m = again.map("m", Codec.string(), Codec.string());
                assertEquals(value(1, VALUE), m.get("k"), "the replacing record was lost with the crash");
                assertEquals(null, m.get("j"));
                LogStores.verify(again);
            }
            return;
        }
        throw new AssertionError("the flusher installed or synced before every copy, 20 times");
    }

    /**
     * A sync that fails while a writer places its value (the heap syncs before it reuses a block
     * freed since its last sync) fails that put alone: the heap had changed nothing, and stays
     * usable. It used to refuse every change from then on, installs and checkpoints included, so
     * that the store could not even close cleanly until it was reopened.
     */
    @Test
    void aSyncThatFailsWhileAValueIsPlacedFailsThatPutAlone() {
        // Values that split that block, which is a few hundred bytes (a checkpoint's is sized by
        // its record): no waste is acceptable, so none takes it whole.
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        HtodStore s = builder(faults, SMALL).acceptableWaste(0).durability(Durability.NONE).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        for (int i = 0; i < 20; i++) {
            m.put("small" + i, "s" + i);
        }
        s.checkpoint(); // frees the first checkpoint's block since the heap's last sync
        faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        int failed = -1;
        for (int i = 0; i < 100 && failed < 0; i++) {
            try {
                m.put("k" + i, value(i, SMALL));
            } catch (org.htod.core.HtodException e) {
                assertTrue(String.valueOf(e.getMessage()).contains("injected"), e.toString());
                failed = i;
            }
        }
        assertTrue(failed >= 0, "no placement met the failing sync");
        assertEquals(null, m.get("k" + failed), "the failed put");
        m.put("k" + failed, value(failed, SMALL));
        m.put("after", value(-1, SMALL));
        s.checkpoint();
        s.close();
        try (HtodStore again = builder(disk.reopen(), SMALL).acceptableWaste(0).open()) {
            assertTrue(again.recoveryReport().clean(), again.recoveryReport().toString());
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            assertEquals(value(failed, SMALL), r.get("k" + failed));
            assertEquals(value(-1, SMALL), r.get("after"));
            assertEquals(20 + failed + 2, r.size());
            LogStores.verify(again);
        }
    }

    /**
     * A placed put whose record a failed log write dropped fails, and its block goes back once the
     * log's heal has overwritten that record: not while the log is still failed (a crash could
     * replay the record until then), and no longer held until the store reopens. The fault is the
     * second sync of a placed put's commit, the one of its frames' durable write, so the record's
     * frames are on the device when it fails; puts are tried until the fault meets one. Then the
     * block is used again by a later put, and the device as a crash would leave it opens with
     * every acknowledged put and without the failed one: the heal had blanked the dropped record,
     * which named the block.
     */
    @Test
    void aPlacedPutWhoseRecordWasDroppedGivesItsBlockBackOnceTheLogHealed() {
        MemoryDevice disk = new MemoryDevice();
        FaultyDevice faults = new FaultyDevice(disk);
        HtodStore s = builder(faults, 512).open();
        java.util.Map<String, String> made = new java.util.HashMap<>();
        MemoryDevice crashed;
        int failed = -1;
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            WriteLayer layer = LogStores.layer(s);
            ReplacedBlocks replaced = layer.installs.replaced;
            long block = 0;
            for (int i = 0; i < 50 && failed < 0; i++) {
                faults.failSync(2, FaultyDevice.Fault.IO_ERROR, false);
                try {
                    m.put("k" + i, value(i, VALUE));
                    made.put("k" + i, value(i, VALUE));
                } catch (org.htod.core.HtodException e) {
                    long[] held = replaced.failedPutBlocks();
                    if (held.length > 0) {
                        failed = i;
                        block = held[0];
                    }
                }
                faults.heal();
            }
            assertTrue(failed >= 0, "no placed put met the failing sync in its commit");
            assertEquals(1, replaced.waiting(), "the failed put's block, held");
            replaced.releaseDurable();
            assertEquals(1, replaced.waiting(), "held while the log has not healed over its record");
            assertTrue(layer.heap.unrecorded().contains(block));
            m.put("after", value(-1, VALUE)); // heals the log first
            made.put("after", value(-1, VALUE));
            assertEquals(0, replaced.waiting(), "given back once the log healed");
            assertTrue(!layer.heap.unrecorded().contains(block), "the block back in the heap");
            long tableId = layer.map("m", false).tableId;
            boolean reused = false;
            for (int j = 0; j < 8 && !reused; j++) {
                m.put("reuse" + j, value(100 + j, VALUE));
                made.put("reuse" + j, value(100 + j, VALUE));
                Mob.Pending p = layer.mob.get(tableId, ("reuse" + j).getBytes(StandardCharsets.UTF_8));
                reused = p != null && p.current.placed() == block;
            }
            assertTrue(reused, "a later put placed its value in the block given back");
            assertEquals(null, m.get("k" + failed));
            crashed = LogStores.copy(disk); // the device as a power cut now would leave it
            s.close();
        } finally {
            LogStores.closeQuietly(s);
        }
        for (MemoryDevice d : List.of(crashed, disk.reopen())) {
            try (HtodStore again = builder(d, 512).open()) {
                HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
                assertEquals(null, r.get("k" + failed));
                for (java.util.Map.Entry<String, String> e : made.entrySet()) {
                    assertEquals(e.getValue(), r.get(e.getKey()), e.getKey());
                }
                assertEquals(made.size(), r.size());
                LogStores.verify(again);
            }
        }
    }

    /**
     * A replaced block whose replacing record a failed log write dropped waits for the change
     * logged again, not for the position its record had: the healed log lays other records over
     * that position, and once they were durable the block went back while the change that
     * replaced its value was still to be made durable. A crash then left the replaced value its
     * key's last, read from a block another value may have taken. The log is driven directly here,
     * with nothing in the write buffer, so that the flusher stays idle.
     */
    /** A data record of key "k" of table 1, as a writer's. */
    private static ByteBuffer recordOfK() {
        return DataRecord.encode(java.util.List.of(
                new DataRecord.Op(1, "k".getBytes(StandardCharsets.UTF_8), new byte[] {1}, 2, 0)));
    }

    /**
     * A block, allocated unrecorded, whose placed value a record of key "k" replaced, appended to
     * the log directly (nothing in the buffer); that record then dropped by a failed sync, the log
     * left failed.
     */
    private static long blockReplacedByADroppedRecord(WriteLayer layer, FaultyDevice dev) {
        long block = layer.heap.allocateUnrecorded(ByteBuffer.allocate(2000));
        Log.Appended replacing = layer.log.append(DataRecord.TYPE, recordOfK());
        layer.installs.replaced.add(block, replacing.lsn(), replacing.generation());
        dev.failSync(1, FaultyDevice.Fault.IO_ERROR, false);
        assertThrows(org.htod.core.HtodException.class, () -> layer.log.awaitDurable(replacing), "dropped");
        return block;
    }

    @Test
    void aReplacedBlockWhoseReplacingRecordWasDroppedWaitsForItsChangeLoggedAgain() {
        FaultyDevice dev = new FaultyDevice(new MemoryDevice());
        HtodStore s = builder(dev, 1024).durability(Durability.NONE).open();
        try {
            WriteLayer layer = LogStores.layer(s);
            Log log = layer.log;
            ReplacedBlocks replaced = layer.installs.replaced;
            long block = blockReplacedByADroppedRecord(layer, dev);
            ByteBuffer record = recordOfK();
            log.heal();
            Log.Appended other = log.append(DataRecord.TYPE, record.duplicate()); // where the dropped one was
            log.awaitDurable(other);
            replaced.releaseDurable();
            assertEquals(1, replaced.waiting(), "the position is durable, the change that replaced the value is not");
            Log.Appended again = log.append(DataRecord.TYPE, record.duplicate()); // the change, logged again
            replaced.relogged(again.lsn(), again.generation());
            replaced.releaseDurable();
            assertEquals(1, replaced.waiting());
            log.awaitDurable(again);
            replaced.releaseDurable();
            assertEquals(0, replaced.waiting(), "given back once the change is durable");
            assertTrue(!layer.heap.unrecorded().contains(block));
        } finally {
            LogStores.closeQuietly(s);
        }
    }

    /**
     * A replaced block whose replacing record a failed log write dropped, when the heal's relog
     * finds no buffered key to log again (as when the key's change was replaced in turn by a
     * record appended after the heal, by a writer that held the append guard across it): the
     * block waits for what was appended up to the relog, not for the dropped record, which never
     * becomes durable. It waited for good, and held back every replaced block after it. The log
     * is driven directly, with nothing in the buffer, as above; the heal is the write layer's, which
     * a put runs.
     */
    @Test
    void aReplacedBlockWhoseDroppedRecordNoRelogCoversGoesBackAfterTheHeal() {
        FaultyDevice dev = new FaultyDevice(new MemoryDevice());
        HtodStore s = builder(dev, 1024).durability(Durability.NONE).open();
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            WriteLayer layer = LogStores.layer(s);
            Log log = layer.log;
            ReplacedBlocks replaced = layer.installs.replaced;
            long block = blockReplacedByADroppedRecord(layer, dev);
            assertTrue(log.failed());
            m.put("after", "a"); // heals the log first; the relog finds nothing of the buffer dropped
            s.sync();
            replaced.releaseDurable();
            assertEquals(0, replaced.waiting(), "given back once what was appended by the relog is durable");
            assertTrue(!layer.heap.unrecorded().contains(block));
            assertEquals("a", m.get("after"));
        } finally {
            LogStores.closeQuietly(s);
        }
    }

    /** A store, its first puts placed and acknowledged, and a copy of its device taken before any install. */
    private static final class Crashed {
        MemoryDevice copy;
        long[] blockAddresses;

        Crashed(int keys) {
            for (int attempt = 0; attempt < 20; attempt++) {
                MemoryDevice disk = new MemoryDevice();
                HtodStore s = builder(disk, 1024).open();
                try {
                    HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
                    WriteLayer layer = LogStores.layer(s);
                    long installs = layer.stats().installs;
                    m.put("small", "s");
                    for (int i = 0; i < keys; i++) {
                        m.put("k" + i, value(i, VALUE));
                    }
                    blockAddresses = new long[keys];
                    long tableId = layer.map("m", false).tableId;
                    for (int i = 0; i < keys; i++) {
                        Mob.Pending p = layer.mob.get(tableId, ("k" + i).getBytes(StandardCharsets.UTF_8));
                        blockAddresses[i] = p == null ? -1 : layer.heap.address(p.current.placed());
                    }
                    copy = LogStores.copy(disk);
                    if (layer.stats().installs == installs && java.util.Arrays.stream(blockAddresses).allMatch(a -> a > 0)) {
                        return; // nothing installed before the copy: the records name blocks no install record does
                    }
                } finally {
                    LogStores.closeQuietly(s);
                }
            }
            throw new AssertionError("the flusher installed before every copy, 20 times");
        }

        /** Overwrites the 48-byte block header of key {@code i}'s placed block in the copy, as a lost write leaves it. */
        void loseBlock(int i) {
            copy.write(blockAddresses[i], ByteBuffer.allocate(48));
        }
    }

    @Test
    void aCrashReopenReadsPlacedValuesFromTheirBlocksAndKeepsThem() {
        Crashed c = new Crashed(40);
        try (HtodStore s = builder(c.copy, 1024).open()) {
            String report = s.recoveryReport().toString();
            assertTrue(report.contains("40 of their values read"), report);
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 40; i++) {
                assertEquals(value(i, VALUE), m.get("k" + i));
            }
            assertEquals("s", m.get("small"));
            LogStores.verify(s); // the blocks taken back are not leaks
            for (int i = 40; i < 400; i++) {
                m.put("k" + i, value(i, VALUE)); // new blocks never land on those taken back
            }
            s.checkpoint();
            LogStores.verify(s);
        }
        try (HtodStore s = builder(c.copy.reopen(), 1024).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 400; i++) {
                assertEquals(value(i, VALUE), m.get("k" + i));
            }
            LogStores.verify(s);
        }
    }

    /**
     * A record's block was made durable before the record's frames were written, so a block that
     * does not hold its entry is damage, whichever commit wrote it, the last one included: the
     * open is refused with the block's offset, and nothing is written.
     */
    @Test
    void aBlockThatDoesNotHoldItsEntryIsDamageEvenInTheLastCommit() {
        for (int lost : new int[] {0, 2}) {
            Crashed c = new Crashed(3);
            c.loseBlock(lost);
            MemoryDevice before = LogStores.copy(c.copy);
            CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> builder(c.copy, 1024).open());
            assertTrue(e.getMessage().contains("which it does not"), e.getMessage());
            assertEquals(c.blockAddresses[lost], e.offset(), e.getMessage());
            assertTrue(sameBytes(before, c.copy.reopen()), "a refused open writes nothing");
        }
    }

    private static boolean sameBytes(MemoryDevice a, MemoryDevice b) {
        if (a.size() != b.size()) {
            return false;
        }
        ByteBuffer x = ByteBuffer.allocate((int) a.size());
        ByteBuffer y = ByteBuffer.allocate((int) b.size());
        a.read(0, x);
        b.read(0, y);
        return x.flip().equals(y.flip());
    }
}
