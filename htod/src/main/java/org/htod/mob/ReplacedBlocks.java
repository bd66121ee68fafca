package org.htod.mob;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.htod.core.alloc.Heap;
import org.htod.core.log.Log;

/**
 * The blocks of placed values that a later change of their key replaced before the flusher took
 * them (see {@link WriteLayer}'s placed values): never installed, each goes back to the heap once
 * the record of the change that replaced it is durable. Not before: until then a crash may leave
 * the replaced value's record the last of its key, and recovery would read its block.
 *
 * <p>Also the blocks of placed values whose writer's wait for its record failed (the put failed):
 * each goes back once the log's heal has overwritten that record ({@link Log.Fate#OVERWRITTEN}),
 * after which no replay can read it and nothing names the block. One whose record turns out
 * durable, or whose fate the log no longer knows, is let go of and stays allocated until the
 * store reopens (unrecorded, so free then).
 *
 * <p>Thread-safe: the writers add and release, and so does the flusher after each install.
 */
final class ReplacedBlocks {
    private final Heap heap;
    private final Log log;
    /**
     * Per block: the block, the position of the record that replaced it and the log's generation
     * it was appended in ({@link Log.Appended}), in the order they came. Guarded by this.
     */
    private final ArrayDeque<long[]> waiting = new ArrayDeque<>();
    /**
     * Per block of a failed put: the block, and the position and generation of its record, in
     * the order they came. Guarded by this.
     */
    private final List<long[]> droppedOwn = new ArrayList<>();
    /** Entries in {@link #waiting} and {@link #droppedOwn}, read without the lock: a release with none waiting costs nothing. */
    private volatile int count;
    /** Bytes of the blocks in {@link #waiting} (those a sync of the log gives back). */
    private volatile long bytes;

    ReplacedBlocks(Heap heap, Log log) {
        this.heap = heap;
        this.log = log;
    }

    /** {@code block}'s value was replaced by the change logged at {@code byRecordAt} in {@code generation}. */
    synchronized void add(long block, long byRecordAt, long generation) {
        waiting.addLast(new long[] {block, byRecordAt, generation});
        count = waiting.size() + droppedOwn.size();
        bytes += heap.blockSize(block);
    }

    /**
     * {@code block}'s value was placed for a put whose wait for its record, at {@code recordAt} in
     * {@code generation}, failed: the block goes back once the log has healed over that record, if
     * a failure dropped it.
     */
    synchronized void addDropped(long block, long recordAt, long generation) {
        droppedOwn.add(new long[] {block, recordAt, generation});
        count = waiting.size() + droppedOwn.size();
    }

    /**
     * Gives back the blocks whose replacing record is durable now (taken in the order they came,
     * which is nearly the log's: one not durable yet holds back those after it until it is), and
     * those of failed puts whose record the log has healed over.
     */
    void releaseDurable() {
        if (count == 0) {
            return;
        }
        List<Long> free = new ArrayList<>();
        synchronized (this) {
            // Not by position alone: a failed log write drops the records past the durable end, and
            // positions from there on hold other records once the log heals, so a dropped record's
            // position may fall below the durable end while its change, logged again, is not
            // durable (see relogged).
            while (!waiting.isEmpty() && log.isDurable(waiting.peekFirst()[1], waiting.peekFirst()[2])) {
                long b = waiting.pollFirst()[0];
                free.add(b);
                bytes -= heap.blockSize(b);
            }
            for (Iterator<long[]> it = droppedOwn.iterator(); it.hasNext();) {
                long[] d = it.next();
                Log.Fate f = log.fate(d[1], d[2]);
                if (f != Log.Fate.PENDING) {
                    it.remove();
                    if (f == Log.Fate.OVERWRITTEN) {
                        free.add(d[0]);
                    }
                }
            }
            count = waiting.size() + droppedOwn.size();
        }
        for (long b : free) {
            heap.unrecorded().release(b);
        }
    }

    /**
     * After a failed log write, the changes it dropped were logged again, the last at {@code lsn}
     * in {@code generation}: a block whose replacing record was dropped waits for that one, which
     * follows its key's new record.
     */
    synchronized void relogged(long lsn, long generation) {
        for (long[] w : waiting) {
            if (log.dropped(w[1], w[2])) {
                w[1] = lsn;
                w[2] = generation;
            }
        }
    }

    /**
     * Syncs the log and gives back the blocks whose replacing records that made durable: placed
     * values replaced before their install hold heap blocks until then. Nothing while the log has
     * failed, which heals first.
     *
     * @throws org.htod.core.HtodException if the sync fails
     */
    void syncAndGiveBack() {
        if (log.failed()) {
            return;
        }
        log.sync();
        releaseDurable();
    }

    /** The blocks of failed puts still held ({@link #addDropped}), for the tests. */
    synchronized long[] failedPutBlocks() {
        return droppedOwn.stream().mapToLong(d -> d[0]).toArray();
    }

    /** Blocks waiting for their replacing record to be durable, or for their own dropped record to be overwritten. */
    int waiting() {
        return count;
    }

    /**
     * Whether the blocks waiting take enough of the heap that the log should be synced to give
     * them back (at durability ASYNC and NONE, where nothing else may sync it for a while): an
     * eighth of the smaller of the write buffer and the log, as the log would hold those values
     * if they had not been placed.
     */
    boolean worthASync(long bufferCapacity) {
        return bytes > syncAt(bufferCapacity);
    }

    /**
     * Whether the blocks waiting take twice what {@link #worthASync} allows: the flusher, which
     * syncs for them, is behind the writers (starved of the processor), and a writer syncs
     * instead, so that the heap stays in proportion to what is live whatever the scheduling.
     */
    boolean overdue(long bufferCapacity) {
        return bytes > 2 * syncAt(bufferCapacity);
    }

    private long syncAt(long bufferCapacity) {
        return Math.max(1 << 20, Math.min(bufferCapacity, log.regionSize()) / 8);
    }
}
