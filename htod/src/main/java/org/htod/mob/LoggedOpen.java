package org.htod.mob;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.htod.core.CorruptStoreException;
import org.htod.core.StepListener;
import org.htod.core.alloc.Heap;
import org.htod.core.alloc.HeapReplay;
import org.htod.core.container.Container;
import org.htod.core.container.ContainerConfig;
import org.htod.core.container.Superblock;
import org.htod.core.device.BlockDevice;
import org.htod.core.log.Log;
import org.htod.core.log.LogReader;
import org.htod.core.log.Records;
import org.htod.core.storage.Storage;
import org.htod.table.HashtableOnDisk;
import org.htod.table.InstallRecord;
import org.htod.table.Installer;
import org.htod.table.TableOptions;
import org.htod.table.TableStore;

/**
 * Opening a store in log mode, in one sequence: container, heap, tables, log replay, ready.
 *
 * <ul>
 *   <li>A store last opened in log mode: the heap and the tables are restored from the checkpoint
 *       the superblock names; the log is read from the checkpoint's start to its end (the first
 *       place no valid record lies); the install records after the checkpoint are redone (the
 *       heap's allocations and frees in memory, the tables' states, and their links, which wait
 *       in memory, where reads see them); the data records go back into the write buffer.
 *       Everything read is checked before anything is written; then the open's writes are made
 *       (the heap's repairs, the superblock, the redone links) and the store is ready. What it
 *       reads is the checkpoint, the log and the tables' headers and bucket directories: bounded
 *       by the log's size and the number of maps, not by the data.
 *   <li>A new store, or one last opened in direct mode: opened as direct mode opens it (its own
 *       recovery after a crash), then its first checkpoint starts the log.
 * </ul>
 */
public final class LoggedOpen {
    /** Bytes a link writes: the handle and its check. */
    private static final int LINK = 12;

    /** What opening found and did, for the store's recovery report. */
    public record Facts(String path, boolean clean, Duration took, long logBytesRead, long dataRecords,
            long installRecords, long allocationsReplayed, long freesReplayed, long linksRedone, long keysBuffered,
            long placedValuesRead, long placedBytesRead, String logEnd) {}

    private LoggedOpen() {}

    /** The open layer and what opening did. */
    public record Opened(WriteLayer layer, Facts facts, TableStore directRecovery) {}

    /** Smallest log region log mode works with; a store with less opens in direct mode only. */
    public static final long MIN_LOG = 64 << 10;

    public static Opened open(BlockDevice dev, boolean create, ContainerConfig cfg, TableOptions topts,
            WriteLayer.Options wopts, LongSupplier clock) {
        return open(dev, create, cfg, topts, wopts, clock, StepListener.NONE);
    }

    /**
     * {@link #open(BlockDevice, boolean, ContainerConfig, TableOptions, WriteLayer.Options,
     * LongSupplier)}, telling {@code progress} how far a recovery has got: the log's bytes read
     * when the log is replayed, the blocks met when a store last opened in direct mode recovers.
     */
    public static Opened open(BlockDevice dev, boolean create, ContainerConfig cfg, TableOptions topts,
            WriteLayer.Options wopts, LongSupplier clock, StepListener progress) {
        long t0 = System.nanoTime();
        if (dev.size() == 0 && cfg.logSize() < MIN_LOG) {
            throw new IllegalArgumentException("log mode needs a log region of at least " + MIN_LOG + " bytes, and "
                    + dev.name() + " would get " + cfg.logSize() + ": give logSize, or open it in direct mode");
        }
        if (dev.size() == 0) {
            if (!create) {
                throw new org.htod.core.NotAStoreException(dev.name() + " is empty and createIfMissing is off");
            }
            Storage s = Storage.create(dev, cfg);
            TableStore direct = TableStore.open(s, topts);
            return convert(s, direct, topts, wopts, clock, t0, "new");
        }
        Container c = Container.open(dev);
        Superblock sb = c.superblock();
        if (sb.logSize() < MIN_LOG) {
            throw new IllegalArgumentException(dev.name() + " has a log region of " + sb.logSize() + " bytes, too small for"
                    + " log mode (at least " + MIN_LOG + "): open it in direct mode");
        }
        if (sb.rootCatalog() == 0 || !sb.log().active()) {
            Storage s = Storage.prepare(dev, progress); // reads the superblock again, as direct mode opens
            TableStore direct = TableStore.open(s, topts, progress);
            return convert(s, direct, topts, wopts, clock, t0, direct.recovery() == null ? "direct-clean" : "direct-recovery");
        }
        return restore(dev, c, sb, topts, wopts, clock, t0, progress);
    }

    /** A store opened in direct mode starts its log: the tables' states carried over, then a first checkpoint. */
    private static Opened convert(Storage s, TableStore direct, TableOptions topts, WriteLayer.Options wopts,
            LongSupplier clock, long t0, String path) {
        Superblock sb = s.superblock();
        long position = align(sb.log().checkpoint());
        long epoch = sb.log().epoch() + 1;
        if (!path.equals("new")) {
            // The region may hold frames of a log this store had before it was opened in direct
            // mode: blank frames over all of it (a new store's region is all zero, which the log
            // formats ahead of itself as it goes). A crash before the first checkpoint leaves the
            // log inactive, and the next open does this again.
            Log.format(s.heap().device(), sb.logOffset(), sb.logSize());
        }
        Log log = new Log(s.heap().device(), sb.logOffset(), sb.logSize(), position, position, epoch);
        log.prepare();
        Installer installer = new Installer(log);
        Map<Long, InstallRecord.TableState> states = new HashMap<>();
        for (InstallRecord.TableState st : direct.states()) {
            states.put(st.tableId(), st);
        }
        if (s.recoveryReport().path().equals("lists")) {
            // PL and PFL lose track of some free space in a crash; their scan finds it again. Log
            // mode trusts the allocator's memory and never scans, so the scan runs now, once.
            s.heap().coalesce();
        }
        s.heap().useJournal(installer);
        TableStore tables = TableStore.openLogged(s, topts, installer, List.of(), states);
        Mob mob = new Mob(wopts.bufferBytes());
        WriteLayer layer = new WriteLayer(s, tables, log, installer, mob, wopts, clock, 0);
        layer.installs.checkpoint(false);
        layer.start();
        Facts f = new Facts(path, direct.recovery() == null, Duration.ofNanos(System.nanoTime() - t0), 0, 0, 0, 0, 0, 0,
                0, 0, 0, "a new log at position " + position);
        return new Opened(layer, f, direct);
    }

    private static long align(long p) {
        return (p + Records.ALIGN - 1) / Records.ALIGN * Records.ALIGN;
    }

    private static Opened restore(BlockDevice dev, Container c, Superblock sb, TableOptions topts,
            WriteLayer.Options wopts, LongSupplier clock, long t0, StepListener progress) {
        String name = dev.name();
        if (sb.snapshotOffset() == 0 || sb.snapshotLength() <= 0) {
            throw new CorruptStoreException(name + ": the superblock says the log is active but names no checkpoint",
                    Superblock.SLOT_A_OFFSET);
        }
        // Bounded before the buffer is made: a length the device cannot hold is damage, not a
        // reason to allocate gigabytes (or to cast a long to a negative int).
        if (sb.snapshotLength() > dev.size() - sb.snapshotOffset() || sb.snapshotLength() > Integer.MAX_VALUE - 8) {
            throw new CorruptStoreException(name + ": the checkpoint at offset " + sb.snapshotOffset() + " of "
                    + sb.snapshotLength() + " bytes runs past the device's end at " + dev.size(), sb.snapshotOffset());
        }
        ByteBuffer cpBytes = ByteBuffer.allocate((int) sb.snapshotLength());
        dev.read(sb.snapshotOffset(), cpBytes);
        CheckpointBlock.Contents cp = CheckpointBlock.decode(cpBytes.flip(), sb.snapshotOffset(), name);
        if (cp.position() != sb.log().checkpoint()) {
            throw new CorruptStoreException(name + ": the checkpoint at offset " + sb.snapshotOffset() + " is of log position "
                    + cp.position() + ", the superblock names position " + sb.log().checkpoint(), sb.snapshotOffset());
        }
        Heap heap = Heap.fromSnapshot(dev, Storage.heapOptions(sb), cp.heapSnapshot(),
                "the heap snapshot of the checkpoint at offset " + sb.snapshotOffset() + " of " + name);
        Storage storage = Storage.restored(c, heap);
        Map<Long, InstallRecord.TableState> states = new HashMap<>();
        for (InstallRecord.TableState st : cp.tables()) {
            states.put(st.tableId(), st);
        }

        // Read the log whole before anything changes.
        List<PlacedValues.Logged> data = new ArrayList<>();
        // The parts of the relog units replayed, by position: where each one's unit begins.
        Map<Long, Long> unitStarts = new HashMap<>();
        List<InstallRecord> installs = new ArrayList<>();
        long start = sb.log().start();
        long end;
        long lastEpoch = sb.log().epoch();
        long bytesRead = 0;
        String stop;
        if (sb.clean()) {
            end = sb.log().checkpoint();
            stop = "closed cleanly at position " + end;
        } else {
            LogReader r = new LogReader(dev, sb.logOffset(), sb.logSize(), start, 0);
            long records = 0;
            Units units = new Units(name, unitStarts);
            InstallUnits installUnits = new InstallUnits(name, sb.log().checkpoint());
            for (Records.Record rec = r.next(); rec != null; rec = r.next()) {
                // Bytes of the log past its start, of the region's size: where it ends is unknown
                // until a record fails to be read, and it is at most the region away. (Not the
                // reader's bytes read: it reads ahead in large windows.)
                if ((++records & 255) == 0) {
                    progress.step(r.position() - start, sb.logSize());
                }
                if (rec.type() == DataRecord.PART_TYPE) {
                    installUnits.other();
                    units.part(rec, data);
                    continue;
                }
                units.other();
                if (rec.type() == DataRecord.TYPE) {
                    // not between an install unit's parts: writers append beside the commit
                    data.add(new PlacedValues.Logged(rec.lsn(), DataRecord.decode(rec.payload(), rec.lsn(), name)));
                } else if (rec.type() == InstallRecord.PART_TYPE) {
                    installUnits.part(rec, installs);
                } else if (rec.type() == InstallRecord.TYPE) {
                    installUnits.other();
                    if (rec.lsn() >= sb.log().checkpoint()) {
                        installs.add(InstallRecord.decode(rec.payload(), rec.lsn(), name));
                    }
                } else {
                    throw new CorruptStoreException(name + ": log record of unknown type " + rec.type() + " at position "
                            + rec.lsn(), r.deviceOffset(rec.lsn()));
                }
            }
            units.other();
            installUnits.other();
            end = r.position();
            // Above every frame's epoch too (the reader has looked at each): a heal's epoch is in
            // no record read back when a crash came before one of it was durable, yet frames
            // written in it may lie past the end, where this log is about to write again.
            lastEpoch = Math.max(lastEpoch, Math.max(r.epoch(), r.highestFrameEpoch()));
            bytesRead = r.bytesRead();
            stop = "ends at position " + end + ": " + r.stopReason() + units.cutShort() + installUnits.cutShort();
            progress.step(end - start, end - start);
        }

        // Redo the installs after the checkpoint: the heap's allocations and frees, the tables'
        // states, and the links that still hold (linksToRedo).
        HeapReplay replay = new HeapReplay(heap);
        for (InstallRecord ir : installs) {
            for (long a : ir.allocs()) {
                replay.claim(a);
            }
            for (long f : ir.frees()) {
                replay.release(f);
            }
            for (InstallRecord.TableState st : ir.tables()) {
                states.put(st.tableId(), st);
            }
        }
        // The values placed in the heap by the last record of their keys, read and checked; each
        // entry's hash by its table's function, which its header holds.
        PlacedValues.Settled placed = PlacedValues.settle(heap, data, TableStore.hashes(heap, states), name);
        Map<Long, InstallRecord.LinkWrite> links = linksToRedo(installs, heap::address);
        // A placed value's block no install recorded is free to the replay: taken back, unrecorded.
        for (PlacedValues.Logged d : data) {
            for (int i = 0; i < d.ops().size(); i++) {
                DataRecord.Op op = d.ops().get(i);
                if (op.placed() != null && placed.value(d.lsn(), i) != null) {
                    replay.claimUnrecordedIfFree(op.placed().block());
                }
            }
        }
        replay.finish();
        checkLinks(links.values(), heap, replay::allocated, name);

        long epoch = lastEpoch + 1;
        Log log = new Log(dev, sb.logOffset(), sb.logSize(), start, end, epoch);
        Installer installer = new Installer(log);
        heap.useJournal(installer);
        TableStore tables = TableStore.openLogged(storage, topts, installer, new ArrayList<>(links.values()), states);
        Map<Long, HashtableOnDisk> known = new HashMap<>();
        for (HashtableOnDisk t : tables.all()) {
            known.put(t.tableId(), t);
        }
        Mob mob = new Mob(wopts.bufferBytes());
        long keys = 0;
        for (PlacedValues.Logged d : data) {
            for (int i = 0; i < d.ops().size(); i++) {
                DataRecord.Op op = d.ops().get(i);
                if (!known.containsKey(op.tableId())) {
                    throw new CorruptStoreException(name + ": the log record at position " + d.lsn() + " changes table id 0x"
                            + Long.toHexString(op.tableId()) + ", which the catalog does not hold", -1);
                }
                Mob.Value v;
                if (op.placed() == null) {
                    v = new Mob.Value(op.value(), op.expiry(), op.version());
                } else {
                    byte[] value = placed.value(d.lsn(), i);
                    // A placed put a later record of its key replaces: a stand-in, replaced next.
                    v = value == null ? new Mob.Value(new byte[0], op.expiry(), op.version())
                            : new Mob.Value(value, op.expiry(), op.version(), op.placed().block(), op.placed().headCrc());
                }
                // A key of a relog unit keeps the log from the unit's first part, as the write
                // layer keeps it (see Mob.relogged): a checkpoint naming a later part as where
                // replay begins would leave the next replay a unit without its first parts.
                long from = unitStarts.getOrDefault(d.lsn(), d.lsn());
                mob.put(op.tableId(), op.key(), known.get(op.tableId()).hash(op.key()), v, from, 0, Mob.UNKNOWN);
                keys++;
            }
        }

        long cpBlock = heap.handleAt(sb.snapshotOffset() - 48); // a read: checked before the open writes

        // Checked: now the open may write.
        long s = start;
        long cpPos = sb.log().checkpoint();
        storage.begin(x -> x.withLog(new Superblock.LogState(epoch, s, cpPos, true)));
        log.prepare();
        tables.writeRecovered();
        WriteLayer layer = new WriteLayer(storage, tables, log, installer, mob, wopts, clock, cpBlock);
        layer.start();
        long[] rc = replay.counts();
        Facts f = new Facts("log", sb.clean(), Duration.ofNanos(System.nanoTime() - t0), bytesRead, data.size(),
                installs.size(), rc[0], rc[1], links.size(), keys, placed.values().size(), placed.bytesRead(), stop);
        return new Opened(layer, f, null);
    }

    /**
     * The parts of relog units as the log gives them (see {@link DataRecord}): a unit's records
     * go to the data records once its last part is read, in order; one that another record or
     * the log's end cuts short is left out whole. Replay never begins inside a unit: the write
     * layer keeps the log, for each key of a unit, from its first part, and so does a replay
     * that puts the unit's keys back into the buffer.
     */
    private static final class Units {
        private final String device;
        private final Map<Long, Long> starts;
        private final List<PlacedValues.Logged> parts = new ArrayList<>();
        private int count;
        private long cut;

        /** {@code starts} gets, for each part of a unit read whole, the position of its first part. */
        Units(String device, Map<Long, Long> starts) {
            this.device = device;
            this.starts = starts;
        }

        void part(Records.Record rec, List<PlacedValues.Logged> data) {
            DataRecord.Part p = DataRecord.decodePart(rec.payload(), rec.lsn(), device);
            if (p.index() == 0) {
                other(); // a unit begun before was cut short: a failure dropped its later parts
                count = p.count();
            } else if (p.index() != parts.size() || p.count() != count) {
                throw new CorruptStoreException(device + ": the log record at position " + rec.lsn() + " is part "
                        + p.index() + " of a relog unit of " + p.count() + " parts, and does not follow "
                        + (parts.isEmpty() ? "its part " + (p.index() - 1) + ": replay begins inside the unit"
                                : "part " + (parts.size() - 1) + " of a unit of " + count),
                        -1);
            }
            parts.add(new PlacedValues.Logged(rec.lsn(), p.ops()));
            if (parts.size() == count) {
                for (PlacedValues.Logged l : parts) {
                    starts.put(l.lsn(), parts.get(0).lsn());
                }
                data.addAll(parts);
                parts.clear();
            }
        }

        /** A record other than a part, or the log's end: a unit not read whole is left out. */
        void other() {
            if (!parts.isEmpty()) {
                cut++;
                parts.clear();
            }
        }

        /** For the recovery report: the units left out, if any. */
        String cutShort() {
            return cut == 0 ? "" : "; " + cut + " relog unit" + (cut == 1 ? "" : "s") + " cut short left out";
        }
    }

    /**
     * The parts of install units as the log gives them (see {@link InstallRecord#split}): a unit's
     * parts, consecutive among the install records (data records may lie between them, as writers
     * append beside a commit), become one install record at its place once its last part is read;
     * a unit that another install record, a relog part, the next unit's first part or the log's
     * end cuts short is left out whole: its commit wrote nothing in place before its last part was
     * durable, and recorded all of it again if it failed. Units before the checkpoint are read
     * for their order only, as install records there are skipped; replay may begin inside one
     * (at a writer's record between its parts), whose later parts are then skipped too.
     */
    private static final class InstallUnits {
        private final String device;
        private final long checkpoint;
        private final List<InstallRecord> parts = new ArrayList<>();
        private int count;
        private long first;
        private long cut;

        InstallUnits(String device, long checkpoint) {
            this.device = device;
            this.checkpoint = checkpoint;
        }

        void part(Records.Record rec, List<InstallRecord> installs) {
            InstallRecord.Part p = InstallRecord.decodePart(rec.payload(), rec.lsn(), device);
            if (p.index() == 0) {
                other(); // a unit begun before was cut short: its commit failed, and this one records it again
                count = p.count();
                first = rec.lsn();
            } else if (p.index() != parts.size() || p.count() != count) {
                if (parts.isEmpty() && rec.lsn() < checkpoint) {
                    return; // replay began inside a unit the checkpoint holds already
                }
                throw new CorruptStoreException(device + ": the log record at position " + rec.lsn() + " is part "
                        + p.index() + " of an install unit of " + p.count() + " parts, and does not follow "
                        + (parts.isEmpty() ? "its part " + (p.index() - 1) : "part " + (parts.size() - 1)
                                + " of a unit of " + count),
                        -1);
            }
            parts.add(p.slice());
            if (parts.size() == count) {
                if (first >= checkpoint) {
                    installs.add(InstallRecord.merge(parts));
                }
                parts.clear();
            }
        }

        /** An install record or relog part, or the log's end: a unit not read whole is left out. */
        void other() {
            if (!parts.isEmpty()) {
                if (first >= checkpoint) {
                    cut++;
                }
                parts.clear();
            }
        }

        /** For the recovery report: the units after the checkpoint left out, if any. */
        String cutShort() {
            return cut == 0 ? "" : "; " + cut + " install unit" + (cut == 1 ? "" : "s") + " cut short left out";
        }
    }

    /**
     * The link writes of {@code installs} (in log order) a replay redoes, the latest per place
     * (keyed by the device address of the link, {@code address} giving a handle's): only links
     * into a block that the end of these records leaves allocated, and recorded at or after its
     * last allocation. Not a link into a block a later record allocates: that allocation wrote the
     * block whole, so a link recorded before it is into the block's earlier entry (a commit that
     * follows one whose link writes failed records those links again, after the record that freed
     * their blocks, and redone they would overwrite the next link of the block's new entry). Nor
     * a link into a block the records leave free, freed before the link's record or after it: no
     * table reaches a free block, and its space may hold what no install record names, a placed
     * value's entry, or the middle of a block a later record allocated at a lower address after
     * the free space was merged, whose bytes the link would overwrite. A record that both
     * allocates and frees a block leaves it free: the replay redoes a record's allocations before
     * its frees, as the commit wrote its links before it freed what they unlinked (a commit whose
     * record was dropped is recorded again by the next one, with its allocations and its links,
     * and with the frees of the blocks that changes made since have unlinked, its own new entries
     * among them).
     */
    static Map<Long, InstallRecord.LinkWrite> linksToRedo(List<InstallRecord> installs,
            java.util.function.LongUnaryOperator address) {
        Map<Long, Integer> lastFree = new HashMap<>();
        Map<Long, Integer> lastAlloc = new HashMap<>();
        for (int i = 0; i < installs.size(); i++) {
            for (long f : installs.get(i).frees()) {
                lastFree.put(address.applyAsLong(f), i);
            }
            for (long a : installs.get(i).allocs()) {
                lastAlloc.put(address.applyAsLong(a), i);
            }
        }
        Map<Long, InstallRecord.LinkWrite> links = new LinkedHashMap<>();
        for (int i = 0; i < installs.size(); i++) {
            for (InstallRecord.LinkWrite l : installs.get(i).links()) {
                long block = address.applyAsLong(l.block());
                Integer freedAt = lastFree.get(block);
                Integer allocatedAt = lastAlloc.get(block);
                boolean endsFree = freedAt != null && (allocatedAt == null || allocatedAt <= freedAt);
                if (!endsFree && (allocatedAt == null || allocatedAt <= i)) {
                    links.put(block + l.offset(), l);
                } else {
                    links.remove(block + l.offset());
                }
            }
        }
        return links;
    }

    /**
     * Checks, before the open writes anything, that each link to redo lands inside a block the
     * replay leaves allocated, past its header: a record whose checksums hold but whose link named
     * any other place (the superblock, say) had the open write 12 bytes there, after it had begun
     * writing, or fail untyped.
     */
    static void checkLinks(java.util.Collection<InstallRecord.LinkWrite> links, Heap heap,
            java.util.function.LongPredicate allocated, String name) {
        for (InstallRecord.LinkWrite l : links) {
            long at = heap.address(l.block());
            if (at < heap.firstBlock() || !allocated.test(l.block()) || !heap.fitsPayload(l.block(), l.offset(), LINK)) {
                throw new CorruptStoreException(name + ": an install record in the log links into the block at offset "
                        + at + " of " + heap.blockSize(l.block()) + " bytes at offset " + l.offset()
                        + ": expected a block the records leave allocated, and room for the link in it", at);
            }
        }
    }
}
