package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.alloc.Heap;
import org.htod.core.container.Superblock;
import org.htod.core.log.Log;
import org.htod.core.storage.Storage;
import org.htod.table.HashtableOnDisk;
import org.htod.table.Installer;
import org.htod.table.TableStore;

/**
 * What the write layer does to the tables and the heap, apart from reads: install batches of the
 * buffer's oldest changes, doubling steps, and checkpoints. The flusher thread calls these, and
 * so do a store's {@code checkpoint()} and a test; each runs under the write layer's install
 * lock, which it takes itself, so that one runs at a time.
 *
 * <p>Locks: the install lock ({@code WriteLayer}'s), held for each install, each doubling step
 * and each checkpoint; under it, the buffer's stripe locks for the keys an install takes and
 * releases ({@link Mob#eachUnderLock}), and for an instant in a checkpoint the write side of the
 * append guard. The fields below are guarded by the install lock.
 */
final class Installs {
    private final Storage storage;
    private final Heap heap;
    private final TableStore tables;
    private final Log log;
    private final Installer installer;
    private final Mob mob;
    private final ReentrantLock install;
    private final ReentrantReadWriteLock appendGuard;
    /** The maps by table id, as the write layer keeps them (maps created later appear there). */
    private final Map<Long, BufferedMap> byId;
    private final int installBatch;
    private final WriteLayer.Stats stats;
    /** The write layer's heal after a failed log write: a log that failed takes no record until healed. */
    private final Runnable heal;
    /** Blocks of placed values that a later change replaced before the flusher took them. */
    final ReplacedBlocks replaced;
    /** Bytes of the values of placed puts logged so far (see {@link #placedDue}). */
    final java.util.concurrent.atomic.AtomicLong placedLogged = new java.util.concurrent.atomic.AtomicLong();
    /** {@link #placedLogged} at the last checkpoint. Guarded by the install lock. */
    private long placedAtCheckpoint;
    /** Blocks of checkpoints whose superblock update failed. */
    private final List<Long> heldBlocks = new ArrayList<>();
    /** The record size the heap keeps room for now (see {@link #keepRoomForCheckpoints}). */
    private long keptFor;
    /** Handle of the block holding the checkpoint in force (0: none yet). */
    private long checkpointBlock;
    /** The log's end when the last checkpoint was taken: an idle flusher takes one only if it moved. */
    private volatile long lastCheckpointEnd;
    /**
     * Whether a superblock saying the store was closed cleanly may be on disk while the store is
     * open: a close's last checkpoint tried to write one and failed, and a copy of it may have
     * landed (see {@link #unmarkClean}).
     */
    private volatile boolean cleanMayStand;

    Installs(Storage storage, TableStore tables, Log log, Installer installer, Mob mob, ReentrantLock install,
            ReentrantReadWriteLock appendGuard, Map<Long, BufferedMap> byId, int installBatch, WriteLayer.Stats stats,
            Runnable heal, long checkpointBlock) {
        this.storage = storage;
        this.heap = storage.heap();
        this.tables = tables;
        this.log = log;
        this.installer = installer;
        this.mob = mob;
        this.install = install;
        this.appendGuard = appendGuard;
        this.byId = byId;
        this.installBatch = installBatch;
        this.stats = stats;
        this.heal = heal;
        this.checkpointBlock = checkpointBlock;
        this.lastCheckpointEnd = log.end();
        this.replaced = new ReplacedBlocks(heap, log);
        mob.onReplacedPlaced(replaced);
        mob.whenDropped(log::dropped);
        // From the open on, before installs take the heap's end (a reopen's heap keeps nothing).
        keepRoomForCheckpoints(checkpointSize(checkpointBlock != 0 ? new long[] {checkpointBlock} : new long[0])
                + PLACED_MEANWHILE);
    }

    /**
     * Most keys an install takes while the heap lacks room: halved by each install that found no
     * room for its new entries, so that what fits goes in, and doubled by each that succeeded.
     * Guarded by the install lock.
     */
    private int fitting = Integer.MAX_VALUE;

    /**
     * Installs one batch of the oldest changes; returns whether there was anything to install.
     * When the heap has no room for the batch's new entries (the store full), the buffer's
     * removals go first, which need none and free the blocks of the entries they remove, and
     * the next batch is smaller: a store full to its bound must still take the removals that
     * make room in it, and the puts that fit then. Only when one key alone does not fit, and no
     * removal waits, does the install fail.
     */
    boolean installOnce() {
        install.lock();
        try {
            heal.run();
            // An install record costs about 44 bytes a key: keep it within the flusher's budget.
            int keys = (int) Math.max(1, Math.min(installBatch, log.flusherRecordBudget() / 48));
            List<Mob.Pending> oldest = mob.oldest(Math.min(keys, fitting), Long.MAX_VALUE);
            if (oldest.isEmpty()) {
                return false;
            }
            try {
                install(oldest);
                fitting = fitting > Integer.MAX_VALUE / 2 ? Integer.MAX_VALUE : fitting * 2;
                return true;
            } catch (StoreFullException full) {
                if (!full.heapHasNoRoom()) {
                    throw full; // the device failed a write: the round fails and is tried again
                }
                List<Mob.Pending> removals = mob.removals(keys);
                if (!removals.isEmpty()) {
                    install(removals);
                    return true;
                }
                if (oldest.size() > 1) {
                    fitting = oldest.size() / 2;
                    return true; // a smaller batch next
                }
                throw full;
            }
        } finally {
            install.unlock();
        }
    }

    /**
     * Installs {@code oldest}, keys of the buffer in its queue's order, as one batch: one install
     * record. A failure leaves each key in the buffer as it was, for a later install. The caller
     * holds the install lock.
     */
    private void install(List<Mob.Pending> oldest) {
        List<Mob.Pending> batch = inBucketOrder(oldest);
        Mob.Value[] took = new Mob.Value[batch.size()];
        long[] lockOrder = mob.lockOrder(batch);
        mob.eachUnderLock(lockOrder, i -> took[i] = mob.take(batch.get(i)));
        Map<Long, List<HashtableOnDisk.Item>> items = new HashMap<>();
        for (int i = 0; i < took.length; i++) {
            Mob.Pending p = batch.get(i);
            Mob.Value v = took[i];
            items.computeIfAbsent(p.tableId, t -> new ArrayList<>()).add(new HashtableOnDisk.Item(p.key, p.hash,
                    v.value(), v.expiry(), v.version(), v.placed(), v.placedHeadCrc()));
        }
        try {
            // What a failed commit left goes out alone first (each table's install would do it):
            // recorded after this batch's placed blocks, that record would name them allocated
            // with none of the links into them, and a crash before this batch's own record left
            // them allocated and reached by no table, never freed if their keys changed again.
            tables.commitLeftovers();
            for (Mob.Value v : took) {
                if (v.placed() != 0) {
                    heap.unrecorded().record(v.placed()); // this batch's install record names it
                }
            }
            for (Map.Entry<Long, List<HashtableOnDisk.Item>> e : items.entrySet()) {
                BufferedMap m = byId.get(e.getKey());
                if (m == null) {
                    throw new HtodException("the write buffer holds changes of table id 0x"
                            + Long.toHexString(e.getKey()) + ", which no map of " + heap.device().name() + " has");
                }
                m.table.install(e.getValue());
            }
            tables.commit();
        } catch (RuntimeException e) {
            // A placed block this install recorded but did not link goes back to being
            // unrecorded, as it was before: no record names it, and the install tried again,
            // which takes its key's newest state, records it again only if that state is still
            // its value (else it is given back as a replaced value's block is).
            long[] unlinked = new long[took.length];
            for (int i = 0; i < took.length; i++) {
                long block = took[i].placed();
                if (block != 0 && !links(batch.get(i), block)) {
                    installer.forget(block);
                    heap.unrecorded().unrecord(block);
                    unlinked[i] = block;
                }
            }
            mob.eachUnderLock(lockOrder, i -> mob.abandoned(batch.get(i), unlinked[i]));
            throw e;
        }
        replaced.releaseDurable(); // the commit made every record before it durable
        try {
            mob.eachUnderLock(lockOrder, i -> mob.installed(batch.get(i), took[i]));
        } finally {
            mob.dequeueLeft(oldest); // in the queue's order, as oldest() listed them
        }
        mob.roomMade();
        stats.installs++;
        stats.installedKeys += batch.size();
    }

    /** Bits of a sort key of {@link #inBucketOrder} that hold the key's place in its batch. */
    private static final int PLACE_BITS = 20;

    /**
     * {@code batch} in installation order: by table, and in each table by bucket (the reversed
     * hash, whose top bits are the bucket at every size), so that reads and writes land in the
     * order of the tables' arrays (opportunistic) and a chain's changes go together. A batch of
     * one table, the common case, is sorted as primitive keys (the reversed hash's top 44 bits,
     * then the key's place: buckets in order up to 2^44 of them) instead of by a comparator that
     * reads two keys' fields at each step (at 64 writers of 200-byte values, that sort took 4.2%
     * of the flusher's processor time in JFR's samples; this one 1.0%).
     */
    static List<Mob.Pending> inBucketOrder(List<Mob.Pending> batch) {
        int n = batch.size();
        long table = batch.get(0).tableId;
        boolean oneTable = n <= 1 << PLACE_BITS;
        for (int i = 1; i < n && oneTable; i++) {
            oneTable = batch.get(i).tableId == table;
        }
        if (!oneTable) {
            List<Mob.Pending> sorted = new ArrayList<>(batch);
            sorted.sort(Comparator.<Mob.Pending>comparingLong(p -> p.tableId)
                    .thenComparingLong(p -> Long.reverse(p.hash)));
            return sorted;
        }
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = Long.reverse(batch.get(i).hash) >> PLACE_BITS << PLACE_BITS | i;
        }
        Arrays.sort(keys);
        List<Mob.Pending> sorted = new ArrayList<>(n);
        for (long k : keys) {
            sorted.add(batch.get((int) (k & ((1 << PLACE_BITS) - 1))));
        }
        return sorted;
    }

    /**
     * After a failed install: whether {@code p}'s table links its placed block {@code block}. When
     * the table cannot tell (a read that fails as well), it counts as linked: the block then stays
     * recorded and allocated, which the verifier reports, rather than given back while a table may
     * hold it.
     */
    private boolean links(Mob.Pending p, long block) {
        BufferedMap m = byId.get(p.tableId);
        try {
            return m == null || m.table.holds(p.key, block);
        } catch (RuntimeException e) {
            return true;
        }
    }

    /**
     * One step (one install record) of each doubling that is due; returns whether any remain.
     * The flusher interleaves them with its installs, so a doubling never stalls writers. A step
     * is left for later, and counted as remaining, while the log lacks {@linkplain
     * #roomForFlusherRecords room}: a step waiting for room would wait holding the install lock,
     * which the installs and the checkpoint that make room need (a writer's {@code checkpoint()}
     * hung so, its steps having eaten the reserve while the writers' records held the log).
     */
    boolean doublings() {
        heal.run(); // as an install does first
        boolean more = false;
        for (HashtableOnDisk t : tables.all()) {
            install.lock();
            try {
                // Under the lock that the step is taken under: another thread's step or install
                // may have used the room between a look before it and the step.
                if (!roomForFlusherRecords()) {
                    return true;
                }
                if (t.doublingDue(0)) {
                    more |= t.doublingStep(0);
                    if (!t.noRoomToDouble()) {
                        stats.doublingSteps++;
                    }
                }
            } finally {
                install.unlock();
            }
        }
        return more;
    }

    /**
     * The flusher's further doubling steps, before an install: as many as each table needs to be
     * no longer {@linkplain HashtableOnDisk#doublingBehind behind} its entries and the keys the
     * buffer will add to it, so that chains stay as short as the load factor says. With one step
     * per install batch, as before, a steady load of new keys went into tables sized for what
     * they held, and every put and install walked chains as long as the batch over the buckets.
     * The install lock is taken per step, so that a reader's size gets in between; a checkpoint
     * whenever the log fills, as between install batches.
     *
     * <p>Each step is a record in the log, which a checkpoint releases only up to the oldest
     * record whose key is still buffered: the steps stop once the log has no room left for four
     * more of the flusher's records, enough for an install and a checkpoint. Without that bound
     * they ate the reserve that writers leave to the flusher (the last quarter), and left the
     * flusher waiting for room only its installs could make.
     */
    void keepUpDoublings() {
        heal.run(); // as an install does first: a log that failed a write takes no record until healed
        for (HashtableOnDisk t : tables.all()) {
            long coming = Math.max(0, mob.delta(t.tableId(), false, null));
            while (t.doublingBehind(coming) && roomForFlusherRecords()) {
                boolean more;
                install.lock();
                try {
                    // Both again under the lock: another thread's step or install (a caller's
                    // checkpoint runs installs and steps beside the flusher) may have taken the
                    // step or the room meanwhile.
                    if (!t.doublingDue(coming) || !roomForFlusherRecords()) {
                        break;
                    }
                    more = t.doublingStep(coming);
                    if (!t.noRoomToDouble()) {
                        stats.doublingSteps++;
                    }
                } finally {
                    install.unlock();
                }
                checkpointIfLogFills();
                if (!more) {
                    break; // the last step, or another thread doubling this table now
                }
            }
        }
    }

    /**
     * Whether the log has room for four more of the flusher's records, enough for an install and
     * a checkpoint: doubling steps are taken only then (see {@link #keepUpDoublings}).
     */
    private boolean roomForFlusherRecords() {
        return log.used() + 4 * log.flusherRecordBudget() <= log.regionSize();
    }

    /**
     * A checkpoint: the heap's state and every table's, in a new block; the table headers; a
     * sync; then the superblock names the block and the log positions from which recovery reads
     * and redoes, and the log's space before them is free again. With {@code clean}, for a close,
     * the superblock says the store was closed cleanly if the buffer is empty; returns whether it
     * said so.
     */
    boolean checkpoint(boolean clean) {
        install.lock();
        try {
            heal.run();
            tables.commit();
            long cpLsn;
            long start;
            long placedSeen;
            appendGuard.writeLock().lock();
            try {
                cpLsn = log.end();
                start = mob.minFirstLsn(cpLsn);
                placedSeen = placedLogged.get(); // those logged later come after cpLsn
            } finally {
                appendGuard.writeLock().unlock();
            }
            // Clean only with nothing buffered, as seen under the append guard: a writer that
            // was in the middle of a change when the flusher found the buffer empty (a close
            // waits for it) may have added its change since, and a clean superblock has the next
            // open replay nothing.
            boolean cleanNow = clean && start == cpLsn;
            // At ASYNC and NONE the records before cpLsn may not be durable yet. A superblock
            // naming cpLsn beyond the log's durable end would, after a crash, have recovery go on
            // from that end below cpLsn, and the next recovery skip the install records written
            // there (it redoes those from cpLsn on): links on disk into blocks the heap thinks free.
            log.syncTo(cpLsn);
            long old = checkpointBlock;
            // Free in the new checkpoint: the old one's block, and those of checkpoints whose
            // superblock update failed (it may have landed all the same, so they were kept).
            long[] given = new long[heldBlocks.size() + (old != 0 ? 1 : 0)];
            for (int i = 0; i < heldBlocks.size(); i++) {
                given[i] = heldBlocks.get(i);
            }
            if (old != 0) {
                given[given.length - 1] = old;
            }
            Placed placed = placeCheckpoint(cpLsn, given);
            long block = placed.block();
            ByteBuffer rec = placed.record();
            boolean superblockTried = false;
            try {
                heap.rewrite(block, rec);
                tables.writeHeaders();
                heap.sync();
                long payloadAt = heap.address(block) + 48;
                long len = rec.remaining();
                long epoch = log.epoch();
                long s = start;
                superblockTried = true;
                storage.update(sb -> sb.withClean(cleanNow).withSnapshot(payloadAt, len)
                        .withLog(new Superblock.LogState(epoch, s, cpLsn, true)));
            } catch (RuntimeException e) {
                if (superblockTried) {
                    heldBlocks.add(block); // a superblock naming it may be on disk: kept until a later checkpoint lands
                    if (cleanNow) {
                        cleanMayStand = true; // and it may say clean: no record before unmarkClean
                    }
                } else {
                    heap.release(block);
                }
                throw e;
            }
            for (long h : given) {
                heap.release(h);
            }
            heldBlocks.clear();
            cleanMayStand = cleanNow;
            checkpointBlock = block;
            // Larger or smaller than before: the next checkpoint's record is about this one's size.
            keepRoomForCheckpoints(rec.remaining() + PLACED_MEANWHILE);
            lastCheckpointEnd = log.end();
            placedAtCheckpoint = placedSeen;
            log.release(Math.min(start, log.durable()));
            stats.checkpoints++;
            return cleanNow;
        } finally {
            install.unlock();
        }
    }

    /**
     * Room in a checkpoint's first block for the free blocks that values placed meanwhile add to
     * its snapshot (12 bytes each; writers place them without the install lock): 16 of them. A
     * block they outgrow anyway is tried again (see {@link #placeRecord}).
     */
    private static final int PLACED_MEANWHILE = 16 * 12;

    /** Blocks a checkpoint tries before it gives up, each for a record that outgrew the one before. */
    static final int CHECKPOINT_TRIES = 4;

    /** A checkpoint's block and its record, which fits it. */
    record Placed(long block, ByteBuffer record) {}

    /**
     * A checkpoint's block and record ({@link #placeRecord}), in the room the heap keeps for
     * checkpoints, which grows first when the checkpoint outgrew it: if this one finds no room
     * elsewhere either, the entries freed there from now on stay for the next one. The caller
     * holds the install lock.
     */
    private Placed placeCheckpoint(long cpLsn, long[] given) {
        return placeRecord(heap, checkpointSize(given), want -> {
            if (want > keptFor) {
                keepRoomForCheckpoints(want);
            }
            long block = heap.allocateForCheckpoint(ByteBuffer.allocate((int) want));
            installer.forget(block);
            return block;
        }, () -> CheckpointBlock.encode(cpLsn, heap.snapshot(given), tables.states()));
    }

    /**
     * Allocates a block ({@code allocate}, given the payload bytes wanted) for a record of about
     * {@code size} bytes and then encodes the record ({@code encode}), which fits the block. The
     * block is allocated for the record's size as the heap is before the allocation, and the
     * record encoded after it: the allocation itself adds nothing to a checkpoint's snapshot,
     * but values placed meanwhile add free blocks to it (writers place them without the install
     * lock). A record that outgrew its block gives the block back and gets one for its measured
     * size and a margin twice as large as before. A fixed allowance for those free blocks
     * instead (12 bytes for each of 1,024) made the room kept for checkpoints a fifth of a 256
     * KiB heap. After {@link #CHECKPOINT_TRIES} tries it throws, its blocks given back.
     */
    static Placed placeRecord(Heap heap, long size, LongUnaryOperator allocate, Supplier<ByteBuffer> encode) {
        int margin = PLACED_MEANWHILE;
        for (int tries = 1;; tries++) {
            long block = allocate.applyAsLong(size + margin);
            ByteBuffer rec;
            try {
                rec = encode.get();
            } catch (RuntimeException e) {
                heap.release(block);
                throw e;
            }
            if (heap.fitsPayload(block, 0, rec.remaining())) {
                return new Placed(block, rec);
            }
            heap.release(block);
            if (tries == CHECKPOINT_TRIES) {
                throw new HtodException("a checkpoint of " + heap.device().name() + " found its record of "
                        + rec.remaining() + " bytes larger than its block of " + heap.blockSize(block)
                        + " bytes at offset " + heap.address(block) + " at each of " + tries + " tries: values placed"
                        + " meanwhile added free blocks to its snapshot faster than it could place it; its blocks"
                        + " were given back, and the next checkpoint tries again");
            }
            size = rec.remaining();
            margin *= 2;
        }
    }

    /**
     * Bytes of a checkpoint's record as the heap is now: the heap's snapshot with {@code given}
     * counted free, and every table's state.
     */
    private long checkpointSize(long[] given) {
        return CheckpointBlock.length(heap.snapshot(given).remaining(), tables.all().size());
    }

    /**
     * Has the heap keep room at its end for the next checkpoint's block ({@link
     * Heap#keepForCheckpoints}), a quarter larger than {@code record}, the size of the latest
     * one's record (or, before a checkpoint allocates its block, of the one it is about to
     * place): a checkpoint allocates its block before it frees its predecessor's, and with the
     * heap full of entries it found none, so that the log, which only a checkpoint gives back,
     * filled for good with the very removals that would have made room. The quarter is for the
     * snapshot's free blocks, which grow between checkpoints. The room follows the checkpoints'
     * size, down as well as up: sized once from the largest estimate seen, it kept a heap's
     * space from its entries for good, and sized from an earlier checkpoint alone, a checkpoint
     * that outgrew it found no room and, never succeeding, never grew it.
     */
    private void keepRoomForCheckpoints(long record) {
        keptFor = record;
        heap.keepForCheckpoints(record + record / 4);
    }

    /** Whether a superblock saying clean may be on disk while the store is open (see {@link #unmarkClean}). */
    boolean cleanMayStand() {
        return cleanMayStand;
    }

    /**
     * After a close whose last checkpoint failed at its superblock, before the store logs anything
     * more: the superblock in force written again, not clean, above the failed one's sequence, so
     * that it wins. A copy of the clean one may have landed, and a reopen finding it reads none of
     * the log: every change logged since would be lost, and the reopen would write the log again
     * from the checkpoint's position in the epoch after the one the clean superblock records,
     * which frames written since (a heal's) may carry too. The superblock in force names the
     * previous checkpoint, whose block and log are still kept, as after any failed checkpoint.
     * Nothing to do otherwise. Throws, and the flag stays, if the device still fails.
     */
    void unmarkClean() {
        if (!cleanMayStand) {
            return;
        }
        install.lock();
        try {
            if (cleanMayStand) {
                storage.update(sb -> sb.withClean(false));
                cleanMayStand = false;
            }
        } finally {
            install.unlock();
        }
    }

    /** Installs every buffered change and takes a checkpoint, so that a reopen after a crash reads little. */
    void everything() {
        // Everything buffered, a batch at a time, each batch after the doubling steps that size
        // the tables for the keys the buffer adds (as in the flusher's rounds: installed into a
        // table sized for what it held, a load's keys made long chains for every later install to
        // walk, and an empty table grows at once only while it has no entry, see
        // Doubler.Logged.growEmpty); then every doubling still due, a step at a time. A checkpoint
        // whenever the log fills, as the flusher does, since only a checkpoint gives the log's
        // space back to the records of these very steps. Writers go on meanwhile, and their
        // buffered records hold the log's space until installed: steps left for want of room
        // wait for the next round's installs and checkpoint.
        boolean more = true;
        while (more) {
            keepUpDoublings();
            while (installOnce()) {
                checkpointIfLogFills();
                keepUpDoublings();
            }
            more = doublings();
            checkpointIfLogFills();
        }
        checkpoint(false);
    }

    /**
     * A checkpoint if the log is over a third used and a checkpoint would give a sixteenth of it
     * back: only a checkpoint gives its space back, and only up to the oldest record whose change
     * is still buffered. Without the second condition a load of new keys, whose oldest records
     * wait for installs while the flusher doubles the table, took a checkpoint (a heap sync and a
     * superblock write) after every doubling step and gave nothing back: 52 checkpoints while
     * 27,800 objects were put, where the installs that free the log came four times.
     */
    void checkpointIfLogFills() {
        long releasable = releasable();
        if ((log.used() > log.regionSize() / 3 && releasable >= log.regionSize() / 16)
                || (placedDue() && releasable > 0)) {
            checkpoint(false);
        }
    }

    /**
     * Whether the values of placed puts logged since the last checkpoint pass half the write
     * buffer's bound: a crash's replay reads them all back into the buffer. A placed record is some
     * 90 bytes of log for a value of any size, so the log's own fill came far too late: a replay put
     * 16 times the buffer's bound into it.
     */
    boolean placedDue() {
        return placedLogged.get() - placedAtCheckpoint > mob.capacity() / 2;
    }

    /** Bytes of the log a checkpoint now would give back: up to the oldest record still buffered. */
    private long releasable() {
        return mob.minFirstLsn(log.end()) - log.start();
    }

    /** Whether the log has moved since the last checkpoint. */
    boolean logMovedSinceCheckpoint() {
        return log.end() != lastCheckpointEnd;
    }

    /**
     * Whether {@code handle} is the block of the checkpoint in force, or of one whose superblock
     * update failed: blocks no table reaches, which the verifier must not call leaked. The caller
     * holds the install lock.
     */
    boolean isCheckpointBlock(long handle) {
        return handle == checkpointBlock || heldBlocks.contains(handle);
    }
}
