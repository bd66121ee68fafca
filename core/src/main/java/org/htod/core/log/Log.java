package org.htod.core.log;

import java.nio.ByteBuffer;
import java.util.List;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.htod.core.device.BlockDevice;

/**
 * The log: a stream of records kept in the container's circular log region, appended by many
 * threads and made durable by group commit.
 *
 * <h2>Positions</h2>
 *
 * A position (LSN) counts bytes of the stream since the store was created. The region holds the
 * stream in frames ({@link Frames}: 512 bytes, 488 of them the stream's), so one lap of the
 * region holds {@link #regionSize()} bytes of it, and position {@code p} lies in frame {@code (p
 * % regionSize()) / 488}. A record never wraps: when one does not fit before the lap's end, a pad
 * record fills the rest of the lap (or, when fewer than {@link Records#HEADER} bytes are left,
 * readers skip them). Space is reused once {@link #release} says that a checkpoint no longer
 * needs what lies before a position.
 *
 * <h2>Group commit</h2>
 *
 * {@link #append} copies a record into memory and returns at once; {@link #awaitDurable} makes
 * it durable. The first waiter finding no write in progress becomes the leader: it takes every
 * record appended so far, writes them in one device write (two at the end of a lap) and syncs
 * once, while later appends gather for the next leader. Each waiter returns when a sync covers
 * its record: it waits on its own, yielding and then parked ({@link Waiters}), and the leader
 * that covered it wakes it, while one waiter it did not cover is woken to lead the next group. A
 * lone writer waits for exactly one write and one sync; there is no timed wait for it. A leader
 * whose group is smaller than the last one yields the processor to the writers that group
 * released for at most half a commit, so that they do not miss the commit by a hair (see {@link
 * #gather}).
 * When every record before the group is durable, the write is a {@link
 * BlockDevice#writeDurable} and stands for the sync: on a file, it waits for the log's own
 * frames only, not for every page of the file the flusher has written since the last sync.
 * Records appended past {@link #WRITE_AHEAD} bytes with no one waiting (at ASYNC and NONE) go
 * out the same way, as one durable write: every record written is durable but those of the write
 * in progress, so a failure drops exactly the records past the durable position.
 * A record appended as naming other writes (a value its writer placed in the heap) has its
 * write sync the device first, so that what it names is durable before any frame of it.
 * A write restarts in the middle of a frame when the previous one ended there: the frame is
 * rewritten with the same bytes before the new ones, which a tear at sector granularity cannot
 * harm (the frame is then the old one, or the new).
 *
 * <h2>Failures</h2>
 *
 * When a write or sync of the log fails, no record of that group, nor any appended after it, is
 * durable or will be: they are dropped, their waiters get the error, and the log refuses appends
 * until {@link #heal} has overwritten the range the failed write may have reached with blank
 * frames and synced, so that no byte of a dropped record can ever be replayed. Appends then continue at the
 * same position, in a new epoch.
 *
 * <p>Thread-safe. Locks: the monitor of this object guards the in-memory state and the list of
 * waiters; device I/O runs outside it, by one leader at a time, which alone touches
 * the region's frames ({@link FrameWriter}), and so do the unparks of the writers a commit
 * covered.
 */
public final class Log {
    private final BlockDevice dev;
    /** Stream bytes of one lap of the region. */
    private final long regionSize;
    /** The region's frames on the device: the leader's alone (see {@link FrameWriter}). */
    private final FrameWriter frames;
    /** Bytes appends of ordinary records leave free for {@link #appendReserved}: the flusher's room to make room. */
    private final long reserve;

    // ---- guarded by this ----
    private long epoch;
    /** Position of the next record. */
    private long end;
    /** Position before which space may be reused. */
    private long start;
    /** Position up to which records are on the device (written, perhaps not synced). */
    private long written;
    /** Position up to which records are durable. */
    private long durable;
    /** Records appended and not yet taken by a leader, from {@link #written} (or the leader's end) to {@link #end}. */
    private ByteBuffer pending = ByteBuffer.allocate(PENDING);
    private long pendingFrom;
    /**
     * Whether a record in {@link #pending} names data written outside the log (a value placed in
     * the heap by its writer): the write that takes it syncs the device before it writes the
     * frames.
     */
    private boolean pendingNamesOtherWrites;
    /**
     * The buffer of the last group written, cleared, for the next leader to take as {@link
     * #pending}: a lone writer's commit then allocates (and zeroes) no new 64 KiB buffer, which
     * was a twentieth of its time. Null while a leader holds it, or when it had grown past {@link
     * #SPARE_LIMIT}.
     */
    private ByteBuffer spare;
    private boolean leader;
    /** The writers waiting until a commit covers their records (see {@link Waiters}). */
    private final Waiters waiters = new Waiters();
    /** The error of a failed write or sync, until {@link #heal}; and the range it may have reached. */
    private HtodException failure;
    /**
     * Between a {@link #heal} and the end of its relog: the dropped records the layer above keeps
     * are not appended again yet, so a {@link #sync} waits (see {@link #heal(Runnable)}).
     */
    private boolean relogging;
    private long failedFrom;
    private long failedTo;
    /** The generation the failure being healed ended. */
    private long failedGeneration;
    /** Bumped whenever records are dropped, so that an append can tell whether its record survived. */
    private long generation;
    /**
     * For the last {@link #ENDED} generations a failure ended: the generation, how far the log
     * was durable when it failed, and the failure. A record of that generation ending there or
     * before was durable before the failure, whose waiter may only now look ({@link #survived});
     * a later one was dropped, and its writer is told why even when the log has healed since.
     */
    private static final int ENDED = 64;
    private final long[] endedGeneration = new long[ENDED];
    private final long[] durableAtEnd = new long[ENDED];
    private final HtodException[] endedBy = new HtodException[ENDED];
    /**
     * For the same generations: from where the heal after the failure overwrote the log, so that
     * no record of that generation from there on can ever be read back ({@link #fate}); set to
     * {@link Long#MAX_VALUE} when the failure comes, until its heal is done.
     */
    private final long[] healedFrom = new long[ENDED];
    private boolean closed;
    private HtodException refused;
    /** Why room cannot be made now (the flusher meets a device error): a writer that needs room gets it instead of waiting. */
    private HtodException stalled;
    /** Failures reported by {@link #stall} so far: a waiter gives up only on one met after it began to wait. */
    private long stalls;
    /** Appends that waited for room, and the nanoseconds they waited (see {@link #roomWaits}). */
    private long roomWaits;
    private long roomWaitNanos;
    private long groups;
    private long groupRecords;
    /** Written under this monitor; read without it by a leader gathering its group. */
    private volatile long recordsInPending;
    /** Records the last group commit carried: how many writers were committing together then. */
    private long lastGroupRecords;
    /** Nanoseconds a group commit's write and sync take, a moving average: written by the leader that just let go, read by the next. */
    private volatile long commitNanos;

    /**
     * A log over {@code [regionOffset, regionOffset + regionBytes)} of {@code dev}, whose next
     * record goes at {@code end}, with space before {@code start} free for reuse, appending in
     * {@code epoch}. Records up to {@code end} are taken as durable. Reads the frame holding
     * {@code end}, which the first write rewrites. Writes nothing: {@link #prepare} must run
     * before the first append, once the opening may write.
     */
    public Log(BlockDevice dev, long regionOffset, long regionBytes, long start, long end, long epoch) {
        if (regionBytes < 2L * Records.MIN_REGION || regionBytes % 4096 != 0) {
            throw new IllegalArgumentException("a log region holds at least " + 2 * Records.MIN_REGION
                    + " bytes in a multiple of 4096, found " + regionBytes);
        }
        long lap = Frames.lap(regionBytes);
        if (start > end || end - start > lap || end % Records.ALIGN != 0) {
            throw new IllegalArgumentException("log positions must have start <= end <= start + " + lap
                    + " and end aligned to " + Records.ALIGN + ", found " + start + " and " + end);
        }
        this.dev = dev;
        this.regionSize = lap;
        this.reserve = regionSize / 4;
        this.start = start;
        this.end = end;
        this.written = end;
        this.durable = end;
        this.pendingFrom = end;
        this.epoch = epoch;
        this.frames = new FrameWriter(dev, regionOffset, regionBytes, end, this::startNow);
        frames.loadTail(end);
    }

    /**
     * Writes blank frames (see {@link Frames}) over a whole region, then syncs: for a region that
     * held another log before (a store that was in log mode, then in direct mode), so that no
     * frame of that log lies beyond where the new one begins. A new store's region, all zeros,
     * needs no more than {@link #prepare}.
     */
    public static void format(BlockDevice dev, long regionOffset, long regionBytes) {
        FrameWriter.format(dev, regionOffset, regionBytes);
    }

    /**
     * Before the first append of an opening: the frame holding the end written again as this
     * log's (its bytes before the end, the rest empty), and blank frames ahead of it where the
     * region is still zero, then a sync. Recovery then finds, after the last record, a frame of
     * this log whose fill ends there, not zeros before blank frames (which it would take for a
     * zeroed sector).
     */
    public void prepare() {
        long e;
        long from;
        synchronized (this) {
            e = epoch;
            from = end;
        }
        frames.prepare(from, e);
    }

    /**
     * Bytes one record of the flusher may take: its installs and doubling steps stay within this,
     * so that the reserve holds several of them, enough to make room in a full log.
     */
    public long flusherRecordBudget() {
        return regionSize / 32;
    }

    /** Bytes kept free for the flusher's records: ordinary appends wait rather than take them. */
    long reserve() {
        return reserve;
    }

    /** Largest payload one record may carry. */
    public long maxPayload() {
        return Math.min(Integer.MAX_VALUE - 64, regionSize / 8) - Records.HEADER;
    }

    /** Where an append stands: the record's position, the position after it, and the generation it belongs to. */
    public record Appended(long lsn, long end, long generation) {}

    /**
     * Appends a record of {@code type} with {@code payload}, waiting while the log is full (until a
     * checkpoint releases space). Returns at once otherwise; {@link #awaitDurable} makes it durable.
     *
     * @throws HtodException if the log failed and has not healed, or is closed
     * @throws IllegalArgumentException if the payload exceeds {@link #maxPayload()}
     */
    public Appended append(int type, ByteBuffer payload) {
        Appended a = append(type, payload, reserve, false);
        writeAheadIfLarge();
        return a;
    }

    /** {@link #append}, allowed into the space kept for the flusher, whose records make room. */
    public Appended appendReserved(int type, ByteBuffer payload) {
        return appendReserved(type, payload, false);
    }

    /** {@link #appendReserved}; {@code namesOtherWrites} as {@link #tryAppend(int, ByteBuffer, boolean)} says. */
    public Appended appendReserved(int type, ByteBuffer payload, boolean namesOtherWrites) {
        Appended a = append(type, payload, 0, namesOtherWrites);
        writeAheadIfLarge();
        return a;
    }

    /**
     * {@link #append} if the record fits now, else null at once: for a writer that holds a lock
     * the flusher may need, which must not wait for room while holding it (see {@link #awaitRoom}).
     */
    public Appended tryAppend(int type, ByteBuffer payload) {
        return tryAppend(type, payload, false);
    }

    /**
     * {@link #tryAppend}; with {@code namesOtherWrites}, the record names data its writer wrote to
     * the device outside the log before appending it: the write that takes the record first syncs
     * the device, so that the data is durable before any frame of the record is written.
     */
    public Appended tryAppend(int type, ByteBuffer payload, boolean namesOtherWrites) {
        Appended a = tryAppendNow(type, payload, namesOtherWrites);
        if (a != null) {
            writeAheadIfLarge();
        }
        return a;
    }

    /**
     * {@link #tryAppend(int, ByteBuffer)} of a record that only removes (it makes room in the
     * heap once installed), which may take half of the space kept for the flusher ({@link
     * #freeingKeepsFree}): a log full of changes the flusher cannot install for want of heap
     * would otherwise refuse the removals that make that room.
     */
    public Appended tryAppendFreeing(int type, ByteBuffer payload) {
        Appended a = tryAppendNow(type, payload, false, freeingKeepsFree());
        if (a != null) {
            writeAheadIfLarge();
        }
        return a;
    }

    /**
     * Bytes a removal's record leaves free ({@link #tryAppendFreeing}): half of the flusher's
     * reserve, which still holds four of its records ({@link #flusherRecordBudget}), enough for
     * the installs and the checkpoint that make room.
     */
    private long freeingKeepsFree() {
        return reserve / 2;
    }

    private Appended tryAppendNow(int type, ByteBuffer payload, boolean namesOtherWrites) {
        return tryAppendNow(type, payload, namesOtherWrites, reserve);
    }

    private synchronized Appended tryAppendNow(int type, ByteBuffer payload, boolean namesOtherWrites, long keepFree) {
        ensureUsable();
        checkSize(payload);
        if (!fits(Records.length(payload.remaining()), keepFree)) {
            return null;
        }
        return append(type, payload, keepFree, namesOtherWrites);
    }

    /** Bytes appended but not yet written beyond which an appender writes them: memory stays bounded at NONE. */
    static final int WRITE_AHEAD = 1 << 20;

    /**
     * Writes the records appended so far when they exceed {@link #WRITE_AHEAD} bytes and no write
     * is in progress: what no one waits to be durable (at ASYNC and NONE) then waits on the device
     * rather than in memory. As one durable write, as a group commit's: so every record written is
     * durable but those of a write in progress, and a failure drops exactly the records past the
     * durable position. Written without a sync, records ahead of a commit that failed stayed in the
     * log, since a heal rewrites only from the failed write on, while their waiters (the flusher's,
     * for an install) were told they were dropped, and logged them again.
     *
     * @throws HtodException if the write fails: the records from there on are dropped, as for a
     *     failed group commit
     */
    private void writeAheadIfLarge() {
        Taken t;
        synchronized (this) {
            if (leader || pending.position() < WRITE_AHEAD || failure != null || closed) {
                return;
            }
            leader = true;
            t = takePending(PENDING);
        }
        writeTaken(t);
    }

    /**
     * Records a leader took to write: {@code [from, to)} of the stream in {@code batch}, to be
     * sealed against the durable position {@code base}, in frames of {@code epoch}; {@code
     * namesOther} if one names data written outside the log.
     */
    private record Taken(ByteBuffer batch, long from, long to, long base, long epoch, boolean namesOther) {}

    /** Under the monitor, by the leader: takes the pending records, a buffer of {@code spareCapacity} pending next. */
    private Taken takePending(int spareCapacity) {
        Taken t = new Taken(pending.flip(), pendingFrom, end, durable, epoch, pendingNamesOtherWrites);
        pendingNamesOtherWrites = false;
        pending = takeSpare(spareCapacity);
        pendingFrom = t.to();
        return t;
    }

    /**
     * The leader's write of the records it took, made durable; gives the leadership back. If one
     * names data written outside the log, the device is synced before the frames are written. A
     * failure drops the records from {@code t.from()} on (see {@link #fail}).
     */
    private void writeTaken(Taken t) {
        ByteBuffer batch = t.batch();
        long from = t.from();
        long to = t.to();
        long base = t.base();
        boolean ok = false;
        try {
            if (t.namesOther()) {
                // What the records name is durable before any frame of theirs is written, so a
                // record read back after a crash always finds it: were both left to one sync, a
                // crash could keep the record and lose the block, and recovery could not tell
                // that block, torn, from one damaged after it was made durable.
                dev.sync();
            }
            Records.seal(batch, from, base, regionSize);
            frames.formatAhead(to);
            // When everything before from is durable already (always, as every write of records
            // is durable), these frames are all a sync must cover: written through
            // (BlockDevice.writeDurable), the commit waits for them alone, not for the pages the
            // flusher's installs dirtied since the last sync. Frames split at the lap's end take
            // the sync of the whole device (FrameWriter.writeOut).
            boolean through = base == from;
            ByteBuffer stream = frames.writeFrames(from, batch, t.epoch(), through);
            if (!through) {
                dev.sync();
            }
            ok = true;
            // Only now: a failed sync drops these records, and a heal rewrites the frame holding
            // from with the bytes before from, which the tail must still hold then.
            frames.advanceTail(from, stream);
        } catch (HtodException e) {
            fail(e, from, to);
            throw e;
        } finally {
            List<Waiters.Waiter> woken;
            synchronized (this) {
                leader = false;
                if (spare == null && batch.capacity() <= SPARE_LIMIT) {
                    spare = batch.clear(); // written out (writeFrames copied it): nothing reads it again
                }
                releaseIfClosed();
                if (ok) {
                    written = Math.max(written, to);
                    durable = Math.max(durable, to);
                }
                notifyAll(); // those waiting for room, or for the leader to finish (heal)
                woken = waiters.wake(durable, generation, true, unusable());
            }
            Waiters.unpark(woken); // outside the monitor: a woken heir does not wait for the one that woke it
        }
    }

    /** Waits until a record of {@code payloadBytes} would fit without the flusher's reserve. */
    public synchronized void awaitRoom(int payloadBytes) {
        waitForRoom(Records.length(payloadBytes), reserve, true);
    }

    /** {@link #awaitRoom} for a record of {@link #tryAppendFreeing}, which may take half of the flusher's reserve. */
    public synchronized void awaitRoomFreeing(int payloadBytes) {
        waitForRoom(Records.length(payloadBytes), freeingKeepsFree(), true);
    }

    /**
     * Under the monitor: waits until a record of {@code len} bytes (and the pad before it) fits
     * with {@code keepFree} bytes left over, giving up with the flusher's error if {@code
     * giveUpOnStall} and a try begun meanwhile fails (see {@link #stall}). A wait is counted in
     * {@link #roomWaits}.
     */
    private void waitForRoom(int len, long keepFree, boolean giveUpOnStall) {
        long seen = stalls;
        long began = 0;
        try {
            while (!fits(len, keepFree)) {
                ensureUsable();
                if (giveUpOnStall) {
                    ensureNotStalled(seen);
                }
                if (began == 0) {
                    began = System.nanoTime();
                }
                waitQuietly();
            }
        } finally {
            if (began != 0) {
                roomWaits++;
                roomWaitNanos += System.nanoTime() - began;
            }
        }
    }

    /**
     * Under the monitor: whether a record of {@code len} bytes (and the pad before it) fits with
     * {@code keepFree} left. The frame holding the start is in use whole: its bytes before the
     * start share it with live records, so the stream may reach no further than that frame's
     * start a lap on (a frame written there would land on it).
     */
    private boolean fits(int len, long keepFree) {
        return len + padBefore(len) <= regionSize - (end - Frames.frameStart(start)) - keepFree;
    }

    /**
     * Appends that waited for room so far, in {@link #awaitRoom} or inside an append
     * (back-pressure: the checkpoints that free the log's space behind its writers), and the
     * nanoseconds they waited in all.
     */
    public synchronized long[] roomWaits() {
        return new long[] {roomWaits, roomWaitNanos};
    }

    /**
     * The flusher that makes room failed with {@code why} (the disk full, say) and will try again:
     * an append or {@link #awaitRoom} that finds no room and saw a try fail that began after it
     * began to wait throws an error naming {@code why}, instead of waiting for room that may not
     * come. That is the second failure since the wait began: the first may end a try begun before,
     * while the disk was still full, so a write after space returns waits for a try of its own,
     * which may succeed. Wakes every waiter.
     */
    public synchronized void stall(HtodException why) {
        stalled = why;
        stalls++;
        notifyAll();
    }

    /** Room may come again: writers that find none wait for it, as usual. */
    public synchronized void unstall() {
        stalled = null;
    }

    private void ensureNotStalled(long seen) {
        HtodException why = stalled;
        if (why != null && stalls - seen >= 2) {
            String msg = "the log of " + dev.name() + " is full and cannot make room now (" + why.getMessage()
                    + "); nothing was written for this change, reads go on, and writes resume once room is made";
            throw why instanceof StoreFullException ? new StoreFullException(msg, why) : new HtodException(msg, why);
        }
    }

    private void checkSize(ByteBuffer payload) {
        if (payload.remaining() > maxPayload()) {
            throw new IllegalArgumentException("a log record carries at most " + maxPayload() + " bytes (about 1/8 of the "
                    + regionSize + "-byte log region); found " + payload.remaining());
        }
    }

    /**
     * Appends under the monitor, waiting for room beyond {@code keepFree}; {@code namesOtherWrites}
     * marks {@link #pending} for the sync of the device first (see {@link #tryAppend(int,
     * ByteBuffer, boolean)}).
     */
    private synchronized Appended append(int type, ByteBuffer payload, long keepFree, boolean namesOtherWrites) {
        int len = Records.length(payload.remaining());
        checkSize(payload);
        ensureUsable();
        // the flusher's own records (keepFree 0) go on waiting for a release through a stall
        waitForRoom(len, keepFree, keepFree > 0);
        // Again after a wait: a failure that dropped records made the room, and a failed log
        // takes no record until it heals. Appended, the record was written after the heal while
        // its waiter was told it had failed (an install record then logged twice).
        ensureUsable();
        long pad = padBefore(len);
        if (pad > 0) {
            if (pad >= Records.HEADER) {
                put(Records.encode(Records.PAD, end, epoch, ByteBuffer.allocate((int) pad - Records.HEADER)));
            } else {
                put(ByteBuffer.allocate((int) pad)); // fewer bytes than a header: readers skip to the lap's start
            }
        }
        long at = end;
        ensurePending(len);
        Records.encodeInto(pending, type, at, epoch, payload);
        end += len;
        recordsInPending++;
        pendingNamesOtherWrites |= namesOtherWrites;
        return new Appended(at, end, generation);
    }

    /** Bytes of padding needed before a record of {@code len} bytes so that it does not wrap. */
    private long padBefore(long len) {
        long rest = regionSize - end % regionSize;
        return len <= rest ? 0 : rest;
    }

    private void put(ByteBuffer record) {
        ensurePending(record.remaining());
        end += record.remaining();
        pending.put(record);
    }

    /** Bytes of a new {@link #pending} buffer. */
    private static final int PENDING = 64 << 10;
    /** The largest written batch kept as {@link #spare}; a larger one (a group of large records) goes to the collector. */
    private static final int SPARE_LIMIT = 1 << 20;

    /**
     * A buffer for {@link #pending} after a leader took the last, at least {@code capacity} bytes
     * (the taken one's, so that a run of large groups does not grow it afresh each time): the
     * {@link #spare} when it is large enough, else a new one. Under this monitor.
     */
    private ByteBuffer takeSpare(int capacity) {
        ByteBuffer b = spare;
        spare = null;
        if (b != null && b.capacity() >= Math.min(capacity, SPARE_LIMIT)) {
            return b;
        }
        return ByteBuffer.allocate(Math.max(PENDING, capacity));
    }

    /** Grows {@link #pending} to take {@code bytes} more. */
    private void ensurePending(int bytes) {
        if (pending.remaining() < bytes) {
            ByteBuffer bigger = ByteBuffer.allocate(Math.max(pending.capacity() * 2, pending.position() + bytes));
            pending.flip();
            bigger.put(pending);
            pending = bigger;
        }
    }

    /**
     * Returns once the record that ends at {@code a.end()} is durable, leading a group commit if no
     * write is in progress.
     *
     * @throws HtodException if the record was dropped because a write or sync of the log failed
     */
    public void awaitDurable(Appended a) {
        awaitDurable(a.end(), a.generation());
    }

    /** Makes every record before {@code position} durable: nothing to do if it is already. */
    public void syncTo(long position) {
        long gen;
        synchronized (this) {
            if (durable >= position) {
                return;
            }
            ensureUsable();
            gen = generation;
        }
        awaitDurable(position, gen);
    }

    /** Makes every record appended so far durable. */
    public void sync() {
        long upTo;
        long gen;
        synchronized (this) {
            while (relogging) {
                ensureUsable(); // a relog that fails leaves the log failed: this sync fails with it
                waitQuietly();
            }
            ensureUsable();
            upTo = end;
            gen = generation;
        }
        awaitDurable(upTo, gen);
    }

    /**
     * An interrupt does not end this wait: the records are appended already, and become durable
     * with the next commit (or the log fails, and the waiter is told so). Thrown out of the wait,
     * as before, it told a writer its change had failed while the change took effect. Now the wait
     * goes on, and the interrupt is set again when it ends. (The devices keep an interrupt off
     * their channels, so an interrupted waiter may lead a commit.)
     */
    private void awaitDurable(long upTo, long gen) {
        boolean interrupted = false;
        try {
            Waiters.Waiter waited = null;
            while (true) {
                long gatherFor;
                Taken taken;
                if (waited != null) {
                    int s = waiters.await(waited, this);
                    while (s == Waiters.WAITING && Thread.interrupted()) {
                        // An interrupt ended the park: the same waiter waits on (it stays listed,
                        // and a commit may wake it to lead). Cleared, or every park would return
                        // at once; set again on the way out.
                        interrupted = true;
                        s = waiters.await(waited, this);
                    }
                    if (s == Waiters.DURABLE) {
                        return; // the commit that covered it said so: no need of the monitor
                    }
                }
                synchronized (this) {
                    if (waited != null) {
                        waiters.back(waited);
                        waited = null;
                    }
                    boolean leaving = true;
                    try {
                        if (generation != gen) {
                            if (survived(upTo, gen)) {
                                return;
                            }
                            throw dropped(gen);
                        }
                        if (durable >= upTo) {
                            return;
                        }
                        ensureUsable();
                        leaving = false;
                    } finally {
                        if (leaving) {
                            passLeadIfFree(); // a woken heir that leaves without leading wakes another
                        }
                    }
                    if (leader) {
                        waited = waiters.add(upTo, gen);
                        continue;
                    }
                    leader = true;
                    gatherFor = recordsInPending < lastGroupRecords ? lastGroupRecords : 0;
                }
                if (gatherFor > 1) {
                    gather(gatherFor);
                }
                synchronized (this) {
                    try {
                        ensureUsable();
                    } catch (HtodException x) {
                        leader = false;
                        releaseIfClosed();
                        notifyAll();
                        wakeWaiters(true);
                        throw x;
                    }
                    // The next buffer as large as this one, so that a run of large groups does not
                    // grow it afresh each time; but no larger than a spare is kept: one large group
                    // left every later commit, however small, allocating its size.
                    taken = takePending(Math.min(pending.capacity(), SPARE_LIMIT));
                    groups++;
                    groupRecords += recordsInPending;
                    lastGroupRecords = recordsInPending;
                    recordsInPending = 0;
                }
                long t0 = System.nanoTime();
                writeTaken(taken);
                long took = System.nanoTime() - t0;
                long avg = commitNanos;
                commitNanos = avg == 0 ? took : (7 * avg + took) / 8; // a racing leader's update may be lost: it is an estimate
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Under the monitor, with no leader: if writers wait and no heir is on its way, one is woken to lead. */
    private void passLeadIfFree() {
        if (!leader && !waiters.isEmpty()) {
            wakeWaiters(false);
        }
    }

    /**
     * Under the monitor: wakes the parked writers a commit covered (or every one, if {@code all})
     * and, with no leader, one to lead. Unparks under the monitor: for the rare paths only; the end
     * of a commit unparks after leaving it.
     */
    private void wakeWaiters(boolean all) {
        Waiters.unpark(waiters.wake(durable, generation, !leader, all));
    }

    /**
     * A new leader whose group is smaller than the last one: the writers that group released are
     * most likely on their way back with their next records, and each that misses this commit
     * waits a whole commit for the next. So the leader yields the processor to them for at most
     * half a commit's time, or until as many records as the last group carried are in. A
     * lone writer (a last group of one) never waits, and a group that no longer comes back costs
     * one such wait before the last group's size says so.
     */
    private void gather(long records) {
        long deadline = System.nanoTime() + commitNanos / 2;
        while (recordsInPending < records && System.nanoTime() < deadline) {
            Thread.yield();
        }
    }

    /**
     * Under the monitor, for a waiter whose generation a failure ended: whether its records,
     * up to {@code upTo}, were durable before that failure. A commit that covered them may have
     * finished just before a later one failed, before the waiter looked again; told that they were
     * dropped, its writer would log again what the log already holds (an install record's
     * allocations twice, which a replay refuses). Past {@link #ENDED} failures since, it cannot
     * tell, and they count as dropped.
     */
    private boolean survived(long upTo, long gen) {
        int i = (int) Math.floorMod(gen, (long) ENDED);
        return endedGeneration[i] == gen && upTo <= durableAtEnd[i];
    }

    /**
     * Whether the record that begins at {@code lsn}, appended in generation {@code gen} ({@link
     * Appended}), is durable: in the current generation when the durable end lies past its start
     * (ends fall between records); in one a failure ended when it was durable before that failure
     * (a dropped record never is; past {@link #ENDED} failures since, it counts as dropped).
     */
    public synchronized boolean isDurable(long lsn, long gen) {
        return fate(lsn, gen) == Fate.DURABLE;
    }

    /**
     * Whether a failure dropped the record that begins at {@code lsn}, appended in generation
     * {@code gen}: a generation a failure ended, and not durable before it (past {@link #ENDED}
     * failures since, it counts as dropped, and logging it again is harmless).
     */
    public synchronized boolean dropped(long lsn, long gen) {
        return gen != generation && !isDurable(lsn, gen);
    }

    /** What became of a record, as far as the log can tell ({@link #fate}). */
    public enum Fate {
        /** Durable, or may yet be: in the current generation, or in one whose failure is not healed yet. */
        PENDING,
        /** Durable (before any failure that ended its generation). */
        DURABLE,
        /**
         * Dropped by a failure, and overwritten since by the heal after it, from where the failed
         * write began: no replay can ever read it, and what it named outside the log (a placed
         * value's block) is nobody's.
         */
        OVERWRITTEN,
        /** Past {@link #ENDED} failures since its generation ended: the log no longer knows. */
        UNKNOWN
    }

    /**
     * What became of the record that begins at {@code lsn}, appended in generation {@code gen}
     * ({@link Appended}). Only {@link Fate#OVERWRITTEN} lets a caller give back what the record
     * named: {@link #dropped} counts a record of a generation past {@link #ENDED} failures as
     * dropped, which is safe for logging its change again, not for that.
     */
    public synchronized Fate fate(long lsn, long gen) {
        if (gen == generation) {
            return lsn < durable ? Fate.DURABLE : Fate.PENDING;
        }
        int i = (int) Math.floorMod(gen, (long) ENDED);
        if (endedGeneration[i] != gen) {
            return Fate.UNKNOWN;
        }
        if (lsn < durableAtEnd[i]) {
            return Fate.DURABLE;
        }
        return lsn >= healedFrom[i] ? Fate.OVERWRITTEN : Fate.PENDING;
    }

    /** A failed write or sync: every record from {@code from} on is dropped. */
    private synchronized void fail(HtodException e, long from, long to) {
        int i = (int) Math.floorMod(generation, (long) ENDED);
        endedGeneration[i] = generation;
        durableAtEnd[i] = durable;
        endedBy[i] = e;
        healedFrom[i] = Long.MAX_VALUE;
        failedGeneration = generation;
        failure = e;
        failedFrom = from;
        failedTo = Math.max(to, end);
        end = from;
        pendingFrom = from;
        pending = ByteBuffer.allocate(PENDING);
        pendingNamesOtherWrites = false;
        recordsInPending = 0;
        generation++;
        epoch++;
        notifyAll();
    }

    /** Under the monitor: the error for a waiter of generation {@code gen}, which a failure ended. */
    private HtodException dropped(long gen) {
        int i = (int) Math.floorMod(gen, (long) ENDED);
        HtodException f = endedGeneration[i] == gen ? endedBy[i] : null;
        return new HtodException("a write or sync of the log of " + dev.name() + " failed, so this record was dropped"
                + (f == null ? "" : ": " + f.getMessage()), f);
    }

    /** Whether a failed write or sync left the log refusing appends until {@link #heal}. */
    public synchronized boolean failed() {
        return failure != null;
    }

    /** {@link #heal(Runnable)} with nothing to log again: for a log whose records nobody else keeps. */
    public long heal() {
        return heal(() -> {});
    }

    /**
     * After a failure: overwrites the range the failed write may have reached and syncs (the
     * frame holding its start again as it was before it, in the new epoch; the others blank),
     * then lets appends continue from where the last durable record ends, and runs {@code relog},
     * which appends again what the layer above keeps of the dropped records. Until {@code relog}
     * returns, a {@link #sync} waits: begun after the heal, it would otherwise find every record
     * then appended durable and return, while a change acknowledged before it was in none of them
     * yet. Throws, and stays failed, if the device still fails. Returns the position from which
     * records were dropped, or -1 if the log had not failed (then {@code relog} does not run).
     */
    public long heal(Runnable relog) {
        long from;
        long to;
        long e;
        synchronized (this) {
            // Looked at again after each wait for the lead: another heal may have taken it first
            // and healed this failure, and records appended since may lie in its range.
            while (true) {
                if (closed) {
                    throw new StoreClosedException("the log of " + dev.name() + " is closed");
                }
                if (failure == null) {
                    return -1;
                }
                if (!leader) {
                    break;
                }
                waitQuietly();
            }
            leader = true;
            from = failedFrom;
            to = failedTo;
            e = epoch;
        }
        try {
            frames.overwriteFailed(from, to, e);
            dev.sync();
            synchronized (this) {
                int i = (int) Math.floorMod(failedGeneration, (long) ENDED);
                if (endedGeneration[i] == failedGeneration) {
                    healedFrom[i] = from;
                }
                failure = null;
                written = from;
                durable = Math.min(durable, from);
                relogging = true;
            }
        } finally {
            synchronized (this) {
                leader = false;
                releaseIfClosed();
                notifyAll();
                wakeWaiters(unusable());
            }
        }
        try {
            relog.run();
        } finally {
            synchronized (this) {
                relogging = false;
                notifyAll();
            }
        }
        return from;
    }

    /** Space before {@code position} may be reused: a checkpoint no longer needs it. */
    public synchronized void release(long position) {
        if (position < start || position > durable) {
            throw new IllegalArgumentException("release to " + position + " outside [" + start + ", " + durable + "]");
        }
        start = position;
        notifyAll();
    }

    /** Position of the next record. */
    public synchronized long end() {
        return end;
    }

    /**
     * Everything appended so far, as one {@link Appended}: from the log's end to itself, in the
     * current generation. {@link #isDurable} of the position before it says whether every record
     * appended so far is durable.
     */
    public synchronized Appended appendedSoFar() {
        return new Appended(end, end, generation);
    }

    /** Position up to which records are durable. */
    public synchronized long durable() {
        return durable;
    }

    private synchronized long startNow() {
        return start;
    }

    /** Position before which space may be reused. */
    public synchronized long start() {
        return start;
    }

    /** Bytes of the region in use, from {@link #start()} to {@link #end()}. */
    public synchronized long used() {
        return end - start;
    }

    public long regionSize() {
        return regionSize;
    }

    public synchronized long epoch() {
        return epoch;
    }

    /**
     * Group commits so far and the records they carried (their ratio is the mean group size);
     * then how the waits for another's commit ended: over before they began, while yielding, parked.
     */
    public synchronized long[] groupCounts() {
        long[] w = waiters.counts();
        return new long[] {groups, groupRecords, w[0], w[1], w[2]};
    }

    private void ensureUsable() {
        if (closed) {
            throw new StoreClosedException("the log of " + dev.name() + " is closed");
        }
        if (refused != null) {
            throw new HtodException("the log of " + dev.name() + " takes no more records: " + refused.getMessage(), refused);
        }
        if (failure != null) {
            throw new HtodException("the log of " + dev.name() + " refuses appends after a failed write or sync ("
                    + failure.getMessage() + ") until it heals", failure);
        }
    }

    /** Refuses further appends and wakes every waiter; does not write. Lets go of its buffers (see {@link #releaseIfClosed}). */
    public synchronized void close() {
        closed = true;
        releaseIfClosed();
        notifyAll();
        wakeWaiters(true);
    }

    /**
     * Under the monitor, once closed and with no leader writing (else when the lead ends): lets go
     * of the buffers of records and frames, a few hundred KiB for a region of 1 MiB, which a closed
     * store that an application still refers to kept. Nothing appends or writes after close: each
     * path looks at {@link #ensureUsable} under the monitor before it touches them.
     */
    private void releaseIfClosed() {
        if (closed && !leader) {
            pending = ByteBuffer.allocate(0);
            spare = null;
            frames.releaseScratch();
        }
    }

    /**
     * Refuses every append from now on with {@code why}, and wakes every waiter: what the layer
     * above says when it can no longer make room (its flusher stopped on damage), so that no
     * writer waits for room that will never come. Records already appended stay.
     */
    public synchronized void refuse(HtodException why) {
        refused = why;
        notifyAll();
        wakeWaiters(true);
    }

    /** Whether appends are refused now (closed, refused, or failed until healed): every durability waiter is told. */
    private boolean unusable() {
        return closed || refused != null || failure != null;
    }

    private void waitQuietly() {
        try {
            wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HtodException("interrupted while waiting on the log of " + dev.name(), e);
        }
    }
}
