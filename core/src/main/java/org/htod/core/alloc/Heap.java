package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.core.CorruptStoreException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.BlockDevice;

/**
 * The persistent heap: PMFLF allocation (core paper §2.4) over one of the TS, PL and PFL storage
 * methods (§2.1-2.3), with OBA batch allocation (§2.5), recovery and fast restart.
 *
 * <p>Blocks are named by <em>handles</em>: the block's address and size packed in one long
 * ({@code address/grain << 24 | size/grain}), so that a free needs no read to learn the size
 * (one write, as the paper counts it) and a read fetches header and payload in one I/O.
 *
 * <p>Crash safety rests on three rules, argued in {@code docs/FORMAT.md}: (1) a split writes the
 * allocated part and the header of the free remainder in one contiguous write, and the allocated
 * header records the remainder's size, so a lost remainder header can be rebuilt; (2) a block
 * whose extent was defined since the last sync is never split again before the next sync; (3)
 * past the tail checkpoint, only headers with a creation stamp above the checkpoint's stamp are
 * believed (Fig. 7, with stamps in place of bare code bytes).
 *
 * <p>Thread-safe. Allocation, free and sync serialise on one lock and do their writes under it,
 * so that the order of writes is the order of stamps; reads take no lock.
 */
public final class Heap implements AutoCloseable {
    static final int SIZE_BITS = 24;
    static final long SIZE_MASK = (1L << SIZE_BITS) - 1;
    private static final int TAIL_CHECKPOINT_EVERY = 256;

    final BlockDevice dev;
    final HeapOptions opt;
    final StorageMethod method;
    final int grain;
    final int code;
    /** First block address: the heap region after its checkpoint area, grain-aligned. */
    final long start;
    /** End of the heap region. */
    final long end;
    final FreeLists lists;
    final ReentrantLock lock = new ReentrantLock();

    // ---- state, guarded by lock ----
    long tail;
    /** Last creation stamp issued. */
    long stamp;
    /** Every extent with a creation stamp at or below this is durable. */
    long durableStamp;
    /**
     * The extents carved, split or merged since the last sync, by address, with their immutable
     * header. Such a block is not split before the next sync (rule 2), and when it is reused whole
     * its full header is written again with the payload: if the write that defined it were lost,
     * a status write alone would mark the older, larger extent allocated, while the full header
     * (same stamp, same remainder note) defines the extent by itself.
     */
    final FreshExtents fresh = new FreshExtents();

    record FreshExtent(long stamp, long remainder, int listId, long next) {}
    /** With this many fresh extents waiting, allocation syncs by itself so that freed space is reused. */
    static final int FRESH_LIMIT = 1024;
    /** PL's list heads, PFL's free lists. */
    final DiskLists diskLists;
    long checkpointSeq;
    long checkpointedTail;
    /** Stamp of the last checkpoint written, and of the last one known durable (written before a sync). */
    long writtenCheckpointStamp;
    long durableCheckpointStamp;
    /** Whether a checkpoint was written since the last device sync (see {@link #writeCheckpoint(boolean)}). */
    boolean checkpointUnsynced;
    int tailAllocsSinceCheckpoint;

    /** A write recovery owes the disk, made by {@link #finishOpen()}. */
    record Repair(long pos, ByteBuffer bytes) {}

    /** Headers recovery rebuilt, to be written by {@link #finishOpen()}. */
    final java.util.List<Repair> pendingRepairs = new java.util.ArrayList<>();
    /** Whether recovery left writes for {@link #finishOpen()}: until then the heap reads but does not change. */
    volatile boolean recoveryWritesPending;
    /** PL/PFL after a scan: every block goes back on its disk list when the open finishes. */
    boolean relinkAllOnFinish;
    /**
     * PL/PFL after a recovery by their lists, until the open finishes: the free lists are then
     * rebuilt from a scan of every header ({@link HeapRecovery#rebuildFreeLists}), {@link
     * #scannedFree} if a sweep of the layers above made one meanwhile. That scan also applies the
     * remainder rule to every block, which the lists, reaching only some, could not: a note whose
     * remainder's header a torn split lost is written back as the open finishes.
     */
    boolean rebuildFreeByScan;
    /** The scan {@link #forEachAllocated} made while {@link #rebuildFreeByScan}, or null. */
    HeapRecovery.FreeScan scannedFree;

    /**
     * Log mode: the log, not the heap's own metadata, recovers the allocator after a crash (from a
     * snapshot and the allocations and frees the log records since). Then every allocation writes
     * its block's full header, so that a block the log's recovery puts back on a free list, whose
     * header on disk may be stale, is named correctly when it is used again.
     */
    private volatile boolean logged;
    /** Log mode: told of every allocation and free, under the heap's lock, for the log to record. */
    private Journal journal;
    /** Log mode: the blocks {@link #allocateUnrecorded} allocated that the journal has not been told of. */
    private final UnrecordedBlocks unrecorded = new UnrecordedBlocks(this);

    /** What the log records of the heap: every block allocated and freed. */
    public interface Journal {
        void allocated(long handle);

        void freed(long handle);
    }

    /**
     * Log mode: bytes at the heap's end that only {@link #allocateForCheckpoint} may take (see
     * there); 0 in direct mode and until the write layer sets it. Memory only: nothing on disk
     * records it, and a reopen (whose recovery places nothing) does not need it.
     */
    long kept;
    /** Whether the allocation in progress is a checkpoint's, which may take {@link #kept}. Guarded by the lock. */
    boolean forCheckpoint;

    /** Takes back a failed allocation's changes in memory. */
    final AllocationUndo undo = new AllocationUndo(this);

    /** {@code fresh.put}, undone with the allocation it belongs to. */
    void putFresh(long addr, FreshExtent f) {
        FreshExtent prev = fresh.put(addr, f);
        undo.record(() -> {
            if (prev == null) {
                fresh.remove(addr);
            } else {
                fresh.put(addr, prev);
            }
        });
    }

    long allocatedBytes;
    long requestedBytes;
    long allocatedCount;
    long highWater;
    long coalesces;
    /** Free bytes right after the last coalescing (direct mode's trigger, {@link Coalescer#ifFragmented}). */
    long freeAfterCoalesce;
    /**
     * Bytes freed since the last coalescing (log mode's trigger): the space that may have broken
     * up again. The free total would not do there: allocations take free space and frees give it
     * back, so it can stand still while the free space breaks up and the heap grows without end
     * (from 29 to 153 MB over 600,000 puts of 12 MB of live values, measured).
     */
    long freedSinceCoalesce;
    private volatile boolean closed;
    /** A device error in the middle of a change: memory and disk may disagree until a reopen recovers. */
    private volatile org.htod.core.HtodException failure;
    HeapRecoveryReport report;

    private Heap(BlockDevice dev, HeapOptions opt) {
        this.dev = dev;
        this.opt = opt;
        this.method = opt.method();
        this.grain = opt.grain();
        this.code = BlockHeader.codeFor(opt.storeId());
        long first = opt.heapOffset() + Checkpoint.AREA_SIZE;
        this.start = (first + grain - 1) / grain * grain;
        this.end = opt.heapOffset() + opt.heapCapacity();
        this.lists = new FreeLists(grain, opt.maxQuickList());
        int n = method == StorageMethod.TS ? 0 : lists.listCount();
        if (n > Checkpoint.maxLists()) {
            throw new IllegalArgumentException("maxQuickList " + opt.maxQuickList() + " makes " + n
                    + " disk lists; the checkpoint holds at most " + Checkpoint.maxLists());
        }
        this.diskLists = new DiskLists(this, method, n);
        this.tail = start;
        this.highWater = start;
    }

    /** Formats a new, empty heap: writes both checkpoint copies and syncs. */
    public static Heap create(BlockDevice dev, HeapOptions opt) {
        Heap h = new Heap(dev, opt);
        h.writeCheckpoint();
        h.checkpointUnsynced = false; // nothing durable yet to keep: a heap not synced once is no heap
        h.writeCheckpoint();
        h.syncDevice();
        h.durableCheckpointStamp = h.writtenCheckpointStamp;
        h.report = new HeapRecoveryReport("new", java.time.Duration.ZERO, 0, 0, 0, 0, 0, 0, null);
        return h;
    }

    /**
     * Opens an existing heap. With a snapshot (written by {@link #shutdown()} at a clean close) the
     * in-memory state is read from it; otherwise, or if the snapshot is unreadable, the storage
     * method's own recovery runs. {@link #recoveryReport()} says which and what it found.
     */
    public static Heap open(BlockDevice dev, HeapOptions opt, SnapshotRef snapshot) {
        Heap h = prepare(dev, opt, snapshot);
        h.finishOpen();
        return h;
    }

    /**
     * {@link #open}, but the writes recovery owes wait for {@link #finishOpen()}: until then the
     * heap serves reads only and nothing has been written.
     */
    public static Heap prepare(BlockDevice dev, HeapOptions opt, SnapshotRef snapshot) {
        return prepare(dev, opt, snapshot, org.htod.core.StepListener.NONE);
    }

    /** {@link #prepare(BlockDevice, HeapOptions, SnapshotRef)}, telling {@code progress} of the headers a recovery reads. */
    public static Heap prepare(BlockDevice dev, HeapOptions opt, SnapshotRef snapshot, org.htod.core.StepListener progress) {
        Heap h = new Heap(dev, opt);
        HeapRecovery.run(h, snapshot, progress);
        return h;
    }

    /**
     * Makes the writes the open owes: after a crash, the headers recovery rebuilt, the PL/PFL
     * disk lists relinked, a checkpoint, and a sync. Until this runs, the heap serves reads and
     * refuses changes, so that the layers above can check their own structures before anything
     * is written, and an open that fails changes nothing on disk. Idempotent.
     */
    public void finishOpen() {
        lock.lock();
        try {
            if (!recoveryWritesPending) {
                return;
            }
            if (rebuildFreeByScan) {
                HeapRecovery.rebuildFreeLists(this);
            }
            for (Repair r : pendingRepairs) {
                dev.write(r.pos(), r.bytes());
            }
            if (method != StorageMethod.TS) {
                Coalescer.relink(this, relinkAllOnFinish);
            }
            writeCheckpoint();
            syncDevice();
            durableCheckpointStamp = writtenCheckpointStamp;
            pendingRepairs.clear();
            recoveryWritesPending = false;
        } catch (org.htod.core.HtodException e) {
            throw failed(e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether the heap region of {@code dev} was ever formatted ({@link Checkpoint#areaWritten}): a
     * damaged checkpoint counts as formatted, so that opening reports it instead of formatting over data.
     */
    public static boolean isFormatted(BlockDevice dev, HeapOptions opt) {
        return Checkpoint.areaWritten(dev, opt.heapOffset());
    }

    // ---------------------------------------------------------------- handles

    public long address(long handle) {
        return (handle >>> SIZE_BITS) * grain;
    }

    public long blockSize(long handle) {
        return (handle & SIZE_MASK) * grain;
    }

    long handle(long addr, long size) {
        return (addr / grain) << SIZE_BITS | (size / grain);
    }

    /** Largest payload one block can hold. */
    public long maxPayload() {
        return SIZE_MASK * grain - BlockHeader.SIZE;
    }

    long blockSizeFor(long payloadLength) {
        if (payloadLength > maxPayload()) {
            throw new IllegalArgumentException("an object of " + payloadLength + " bytes exceeds the largest block payload of "
                    + maxPayload() + " bytes (grain " + grain + ")");
        }
        long need = BlockHeader.SIZE + payloadLength;
        return (need + grain - 1) / grain * grain;
    }

    // ---------------------------------------------------------------- allocation

    /**
     * Log mode: {@link #allocate}, but the allocation is not told to the journal now; {@link
     * UnrecordedBlocks#record} tells it later, or {@link UnrecordedBlocks#release} gives the block back. For a
     * block that a log record will name before any install record may: until then, the log's
     * recovery counts it free, and a checkpoint must count it free too ({@link #snapshot}).
     * Placed in a free block before the tail ({@link Placer#placeReusing}), not as {@link
     * #allocate} places, which takes the tail before splitting a larger block: a stream of such
     * blocks, each given back when its key changes again, would otherwise grow the heap by what
     * is written, not by what is held. Only a durable free extent may be split, and the blocks
     * given back are not durable until the heap's next sync, which a log-mode heap gets only from
     * the flusher's installs: so when the tail is all that is left while a free block would do,
     * this syncs first.
     */
    public long allocateUnrecorded(ByteBuffer payload) {
        if (!logged) {
            throw new IllegalStateException("an unrecorded allocation is for log mode, where the log recovers the allocator");
        }
        return allocate(payload, true);
    }

    /** The blocks allocated unrecorded, to record, give back or ask about. */
    public UnrecordedBlocks unrecorded() {
        return unrecorded;
    }

    /** Tells the journal of a block allocated unrecorded; the caller holds {@link #lock}. */
    void journalAllocated(long handle) {
        if (journal != null) {
            journal.allocated(handle);
        }
    }

    /** Allocates a block for {@code payload} and writes it, header and data, in one device write. */
    public long allocate(ByteBuffer payload) {
        return allocate(payload, false);
    }

    /**
     * Log mode: keeps room at the heap's end for a checkpoint's block of up to {@code payload}
     * bytes, which only {@link #allocateForCheckpoint} may take: from now on no other allocation
     * places a byte there, from the tail or from a free block. A log-mode checkpoint allocates
     * its new block before it frees the old one, and only a checkpoint gives the log's space
     * back: a heap filled by entries left it no room, no change could be logged any more, and
     * so no removal could make room either, until a reopen.
     *
     * <p>Three such blocks and the acceptable waste: the kept bytes hold no block but
     * checkpoints', and at most one of those at a time (the one in force; the new one is
     * allocated before its predecessor is freed), of at most a block and the waste of a block
     * used whole. What that one leaves lies before it and after it, one of the two at least a
     * block long, and a coalescing (which {@link #allocate} runs when it finds no room) makes
     * it one free block, or the tail. A quarter of the heap at most. Each call sets the room
     * anew, larger or smaller than before: the caller follows its checkpoints' size, which
     * grows and shrinks with the free blocks their snapshots list. Blocks past the kept point
     * when it is set stay where they are, and the space becomes the checkpoints' as they are
     * freed; bytes no longer kept go back to every allocation. Memory only: nothing on disk
     * records it, and a reopen, whose recovery places no block, does not rely on it.
     */
    public void keepForCheckpoints(long payload) {
        long want = 3 * blockSizeFor(payload) + opt.acceptableWaste();
        lock.lock();
        try {
            kept = Math.min(want, (end - start) / 4) / grain * grain;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes at the heap's end kept for checkpoints ({@link #keepForCheckpoints}). */
    public long keptForCheckpoints() {
        lock.lock();
        try {
            return kept;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@link #allocate}, for a log-mode checkpoint's block: it may take the bytes {@linkplain
     * #keepForCheckpoints kept} for checkpoints as well as any other free space.
     */
    public long allocateForCheckpoint(ByteBuffer payload) {
        lock.lock();
        try {
            forCheckpoint = true;
            return allocate(payload, false);
        } finally {
            forCheckpoint = false;
            lock.unlock();
        }
    }

    /**
     * Where the allocation in progress may end its block: the heap's end for a checkpoint's,
     * else before the bytes kept for checkpoints. The caller holds the lock.
     */
    long reach() {
        return forCheckpoint ? end : end - kept;
    }

    /** Whether free block {@code b} lies wholly where the allocation in progress may place ({@link #reach}). */
    boolean withinReach(FreeBlock b) {
        return b.addr + b.size <= reach();
    }

    /** Where an allocation found no room: the heap's end, and what of it is kept for checkpoints. */
    String endNote() {
        return "heap ends at " + end + (kept > 0 && !forCheckpoint ? ", its last " + kept
                + " bytes kept for the log's checkpoints" : "");
    }

    /** {@link #allocate}, or with {@code unrecorded} {@link #allocateUnrecorded}. */
    private long allocate(ByteBuffer payload, boolean unrecordedBlock) {
        long size = blockSizeFor(payload.remaining());
        lock.lock();
        try {
            ensureWritable();
            // Before the allocation, not after: an error here must not reach a caller whose
            // block was allocated, who would never get its handle.
            keepStampsNearCheckpoint();
            Placer.Placement p;
            try {
                if (fresh.size() >= FRESH_LIMIT) {
                    sync();
                }
                Coalescer.ifFragmented(this);
                p = unrecordedBlock ? placeReusing(size) : placeMakingRoom(size);
            } catch (org.htod.core.HtodException e) {
                // Log mode: what can fail here is a sync (coalescing merges in memory), which
                // changed nothing in memory (see sync): the allocation fails, the heap stays
                // usable. A placed value's writer met one whenever a sync failed once, and the
                // whole store then refused every change until it was reopened.
                throw logged ? e : failed(e);
            }
            if (p == null) {
                // Nothing has changed: the heap stays usable, for frees among others.
                throw new StoreFullException("no room for a block of " + size + " bytes in the heap of " + dev.name()
                        + ": tail at " + tail + ", " + endNote() + ", " + lists.freeBytes() + " bytes free in "
                        + lists.freeCount() + " blocks too small to use", true);
            }
            // A failed write is undone: the heap is as it was, and usable.
            long handle = undo.run(() -> Placer.write(this, p, payload));
            account(p.size(), payload.remaining());
            if (unrecordedBlock) {
                unrecorded.add(handle);
            } else if (journal != null) {
                journal.allocated(handle);
            }
            return handle;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A placement for an unrecorded block ({@link Placer#placeReusing}): a free block before the
     * tail, syncing first when only blocks freed since the last sync would serve; null if none.
     */
    private Placer.Placement placeReusing(long size) {
        Placer.Placement p = Placer.placeReusing(this, size);
        if ((p == null || p.kind() == Placer.Kind.TAIL) && !fresh.isEmpty() && Placer.anyFreeAtLeast(this, size)) {
            sync();
            p = Placer.placeReusing(this, size);
        }
        return p;
    }

    /** A placement for {@code size} bytes, syncing or coalescing when that makes room; null if none. */
    private Placer.Placement placeMakingRoom(long size) {
        Placer.Placement p = Placer.place(this, size);
        if (p == null && !fresh.isEmpty()) {
            sync();
            p = Placer.place(this, size);
        }
        if (p == null && lists.freeCount() > 0) {
            Coalescer.coalesce(this);
            p = Placer.place(this, size);
        }
        return p;
    }

    /**
     * Records a device error met in the middle of a change (a write or sync that failed, the disk
     * full): the free lists may no longer match the disk, so the heap refuses further changes;
     * reopening recovers from what the disk holds.
     */
    RuntimeException failed(org.htod.core.HtodException e) {
        failure = e;
        return e;
    }

    /**
     * OBA (paper Fig. 8): places a batch best-fit into free blocks of at least {@code T} bytes and
     * contiguously at the tail, then writes it in ascending address order, adjacent blocks in one
     * write. Returns the handles in the order of {@code payloads}. When that leaves no room, it
     * makes room as {@link #allocate} does (a sync, a coalescing) and places the batch again with
     * every free block a candidate; a batch that fails leaves the heap as it was.
     */
    public long[] allocateBatch(List<ByteBuffer> payloads) {
        lock.lock();
        try {
            ensureWritable();
            keepStampsNearCheckpoint(); // before, as in allocate
            try {
                Coalescer.ifFragmented(this);
            } catch (org.htod.core.HtodException e) {
                throw failed(e);
            }
            long[] handles;
            try {
                handles = undo.run(() -> BatchAllocator.allocate(this, payloads, false));
            } catch (BatchAllocator.NoRoom noRoom) {
                // Undone: nothing has changed. Make room as allocate does before it gives up, and
                // place the batch again with every free block a candidate, whatever its size, the
                // tail last: blocks freed since the last sync (which a log-mode heap gets only from
                // the flusher's installs, whose batches could then never reuse them), adjacent free
                // blocks that make room only merged, and blocks below the threshold T or of
                // another quick list, which a single allocation splits or takes within the waste.
                long need = 0;
                for (ByteBuffer b : payloads) {
                    need += blockSizeFor(b.remaining());
                }
                if (need > lists.freeBytes() + Math.max(0, reach() - tail)) {
                    throw noRoom.full(); // no merge could make room: the free blocks are left as they are
                }
                try {
                    if (!fresh.isEmpty()) {
                        sync();
                    }
                    if (lists.freeCount() > 0) {
                        Coalescer.coalesce(this); // may move the tail back, leaving no free block
                    }
                } catch (org.htod.core.HtodException e) {
                    throw logged ? e : failed(e);
                }
                try {
                    handles = undo.run(() -> BatchAllocator.allocate(this, payloads, true));
                } catch (BatchAllocator.NoRoom again) {
                    // Nothing has changed: the heap stays usable, for frees among others.
                    throw again.full();
                }
            }
            if (journal != null) {
                for (long handle : handles) {
                    journal.allocated(handle);
                }
            }
            return handles;
        } finally {
            lock.unlock();
        }
    }

    boolean tailFits(long size) {
        return tail <= reach() - size;
    }

    /** Rule 2: only a block whose extent is durable may be split. */
    boolean canSplit(FreeBlock b) {
        return !fresh.containsKey(b.addr);
    }

    /** After a device sync: every extent so far is durable. */
    void markDurable() {
        durableStamp = stamp;
        fresh.clear();
    }

    /** The valid header at {@code pos}, or null: one read. */
    BlockHeader headerAt(long pos) {
        ByteBuffer hb = ByteBuffer.allocate(BlockHeader.SIZE);
        dev.read(pos, hb);
        return BlockHeader.decode(hb, 0, code, grain);
    }

    void takeFromLists(FreeBlock b) {
        lists.remove(b);
        tookOffLists(b);
    }

    /**
     * {@link #takeFromLists} of {@code blocks}: those of {@code oldest}, the oldest blocks of
     * quick list {@code listId} in order, that {@code take} marks, in one pass over those.
     */
    void takeFromQuickList(int listId, List<FreeBlock> blocks, FreeBlock[] oldest, boolean[] take) {
        lists.removeFromQuick(listId, oldest, take);
        blocks.forEach(this::tookOffLists);
    }

    /** After {@code b} left the in-memory lists: its undo step, and for PFL its unlink from the list on disk. */
    private void tookOffLists(FreeBlock b) {
        undo.record(() -> lists.add(b));
        undo.took(b);
        if (method == StorageMethod.PFL) {
            diskLists.pflUnlink(b);
        }
    }

    void advanceTail(long size) {
        tail += size;
        highWater = Math.max(highWater, tail);
        tailAllocsSinceCheckpoint++;
    }

    void account(long blockSize, long payloadLength) {
        allocatedBytes += blockSize;
        requestedBytes += BlockHeader.SIZE + payloadLength;
        allocatedCount++;
    }

    // ---------------------------------------------------------------- free, read, rewrite

    /**
     * Frees a block: one write. TS and PL flip the status byte; PFL also links the block at the
     * head of its free list, in the same write.
     */
    public void free(long handle) {
        free(handle, true);
    }

    /**
     * Log mode: gives a block back in memory only, writing nothing. For blocks allocated by an
     * operation that then failed before anything named them durably (the log never recorded the
     * allocation): on disk the block may still say allocated, which log mode never relies on.
     */
    public void release(long handle) {
        if (!logged) {
            throw new IllegalStateException("release is for log mode, where the log recovers the allocator");
        }
        free(handle, false);
    }

    private void free(long handle, boolean freeNow) {
        // Log mode writes nothing for a free: the log's records and checkpoints say which blocks
        // are free, never their headers (recovery writes those from the log). So a free cannot
        // fail there, and a full disk never leaves the lists in doubt.
        boolean write = freeNow && !logged;
        long addr = address(handle);
        long size = blockSize(handle);
        lock.lock();
        try {
            ensureWritable();
            checkHandle(handle);
            FreeBlock b;
            if (method == StorageMethod.PFL) {
                b = new FreeBlock(addr, size, stamp, lists.listOf(size), 0);
                diskLists.pflPush(b);
                if (write) {
                    b.next = diskLists.durableFrom(b, b.listNext);
                    ByteBuffer buf = ByteBuffer.allocate(9);
                    buf.putLong(0, b.next).put(8, BlockHeader.FREE);
                    dev.write(addr + BlockHeader.NEXT_OFFSET, buf);
                }
            } else {
                // The extent header may not be durable yet; the stamp keeps it from being split before a sync.
                b = new FreeBlock(addr, size, stamp, method == StorageMethod.PL ? -1 : BlockHeader.NO_LIST, 0);
                if (write) {
                    ByteBuffer buf = ByteBuffer.allocate(1).put(0, BlockHeader.FREE);
                    dev.write(addr + BlockHeader.STATUS_OFFSET, buf);
                }
            }
            if (!write) {
                fresh.put(addr, new FreshExtent(stamp, 0, b.listId < 0 ? BlockHeader.NO_LIST : b.listId, b.next));
            }
            lists.add(b);
            freedSinceCoalesce += size;
            double ratio = allocatedBytes == 0 ? 1.0 : (double) requestedBytes / allocatedBytes;
            allocatedBytes -= size;
            requestedBytes = Math.max(0, requestedBytes - Math.round(size * ratio));
            allocatedCount--;
            if (journal != null && freeNow) {
                journal.freed(handle);
            }
        } catch (org.htod.core.HtodException e) {
            throw failed(e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Switches the heap to log mode ({@code journal} non-null) or back to direct mode: see
     * {@link #logged}. The caller holds whatever keeps other mutations out.
     */
    public void useJournal(Journal j) {
        lock.lock();
        try {
            this.journal = j;
            this.logged = j != null;
        } finally {
            lock.unlock();
        }
    }

    public boolean logged() {
        return logged;
    }

    /**
     * The heap's in-memory state as the snapshot format holds it (see {@code Snapshot}), with the
     * blocks {@code alsoFree} (handles) counted free: log mode's checkpoint names its
     * predecessor's block free, to be given back once the new checkpoint is the one in force. The
     * blocks allocated unrecorded are counted free too.
     */
    public ByteBuffer snapshot(long... alsoFree) {
        lock.lock();
        try {
            ensureOpen();
            ensureUnfailed();
            // Recovery learns of unrecorded blocks from the records that name them.
            return Snapshot.encode(this, unrecorded.withAll(alsoFree));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Opens a heap from a snapshot held in {@code bytes} (log mode's checkpoint), writing nothing;
     * {@link HeapReplay} then brings it forward to the log's end.
     */
    public static Heap fromSnapshot(BlockDevice dev, HeapOptions opt, ByteBuffer bytes, String where) {
        Heap h = new Heap(dev, opt);
        Snapshot.open(h, bytes, where);
        h.logged = true;
        return h;
    }

    /**
     * The handle of the allocated block that starts at {@code address}, read from its header:
     * how a structure whose address alone is recorded (the superblock's root catalog) is named
     * again. One read of the 48-byte header.
     *
     * @throws CorruptStoreException if no allocated block starts there
     */
    public long handleAt(long address) {
        ensureOpen();
        if (address < start || address % grain != 0 || address >= end) {
            throw new CorruptStoreException("expected a block at offset " + address + " in " + dev.name()
                    + ", but it is not a grain boundary inside the heap [" + start + ", " + end + ")", address);
        }
        ByteBuffer hb = ByteBuffer.allocate(BlockHeader.SIZE);
        dev.read(address, hb);
        BlockHeader h = BlockHeader.decode(hb, 0, code, grain);
        if (h == null || !h.allocated) {
            throw new CorruptStoreException("expected an allocated block header at offset " + address + " in "
                    + dev.name() + ", found " + describe(h), address);
        }
        return handle(address, h.size);
    }

    /** Reads a block's payload: one device read of header and data, header checked. */
    public ByteBuffer read(long handle) {
        ensureOpen();
        long addr = address(handle);
        long size = blockSize(handle);
        // Before the buffer is made: a handle from a structure whose checksums hold but which names
        // no block of this heap (its size bits past the device, past 2 GiB) threw untyped, or
        // allocated gigabytes, before its header could be checked.
        if (addr < start || addr >= end || size < BlockHeader.SIZE || size > Integer.MAX_VALUE
                || (size > 1 << 20 && size > dev.size() - addr)) { // the device's size asked of large blocks only
            throw new CorruptStoreException("expected a block handle within the heap of " + dev.name() + ", found one of "
                    + size + " bytes at offset " + addr, addr);
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size);
        dev.read(addr, buf);
        BlockHeader h = BlockHeader.decode(buf, 0, code, grain);
        if (h == null || !h.allocated || h.size != size) {
            throw new CorruptStoreException("expected an allocated block header of size " + size + " at offset " + addr
                    + " in " + dev.name() + ", found " + describe(h), addr);
        }
        return buf.limit(BlockHeader.SIZE + h.length).position(BlockHeader.SIZE).slice();
    }

    static String describe(BlockHeader h) {
        return h == null ? "no valid header (code bytes, checksum or status wrong)"
                : (h.allocated ? "an allocated" : "a free") + " block of size " + h.size;
    }

    /** Rewrites a block's payload in place if it fits: one write. Returns false, writing nothing, if not. */
    public boolean rewrite(long handle, ByteBuffer payload) {
        ensureWritable();
        int len = payload.remaining();
        if (BlockHeader.SIZE + (long) len > blockSize(handle)) {
            return false;
        }
        ByteBuffer buf = ByteBuffer.allocate(8 + len);
        BlockHeader.putStatus(buf, 0, true, len);
        buf.position(8);
        buf.put(payload.duplicate());
        buf.flip();
        dev.write(address(handle) + BlockHeader.STATUS_OFFSET, buf);
        return true;
    }

    /** Whether {@code len} bytes at payload offset {@code offset} lie within the block {@code handle}. */
    public boolean fitsPayload(long handle, long offset, int len) {
        return offset >= 0 && BlockHeader.SIZE + offset + len <= blockSize(handle);
    }

    /** Writes {@code src} into a block's payload at {@code offset}, within its current length. */
    public void writeAt(long handle, long offset, ByteBuffer src) {
        ensureWritable();
        if (!fitsPayload(handle, offset, src.remaining())) {
            throw new IllegalArgumentException("write of " + src.remaining() + " bytes at payload offset " + offset
                    + " overruns the block of " + blockSize(handle) + " bytes at " + address(handle));
        }
        dev.write(address(handle) + BlockHeader.SIZE + offset, src);
    }

    /** Reads {@code dst.remaining()} payload bytes at {@code offset} without checking the header. */
    public void readAt(long handle, long offset, ByteBuffer dst) {
        ensureOpen();
        if (!fitsPayload(handle, offset, dst.remaining())) {
            throw new IllegalArgumentException("read of " + dst.remaining() + " bytes at payload offset " + offset
                    + " overruns the block of " + blockSize(handle) + " bytes at " + address(handle));
        }
        dev.read(address(handle) + BlockHeader.SIZE + offset, dst);
    }

    private void checkHandle(long handle) {
        long addr = address(handle);
        long size = blockSize(handle);
        if (addr < start || addr % grain != 0 || size == 0 || addr + size > tail) {
            throw new IllegalArgumentException("handle " + Long.toHexString(handle) + " (block at " + addr + " of " + size
                    + " bytes) is not a block of the heap [" + start + ", " + tail + ")");
        }
    }

    // ---------------------------------------------------------------- sync, checkpoint, coalescing

    /**
     * Makes every write made so far durable. Afterwards the blocks created so far may be split,
     * and the checkpoint (tail, stamp, list heads) is brought up to date, becoming durable at the
     * next sync: it only ever names blocks that are already durable.
     */
    public void sync() {
        lock.lock();
        try {
            ensureWritable();
            long checkpointed = writtenCheckpointStamp;
            syncDevice();
            markDurable();
            durableCheckpointStamp = checkpointed;
            if (diskLists.anySkipping() && !logged) {
                // Every block is durable now: the pointers that skipped blocks defined since the
                // last sync name their successors in list order again. Left as they were, one that
                // named a block later taken from the middle of its list (the unlink rewrites the
                // block's predecessor in memory, the skipped one) named an allocated block for good,
                // and every crash lost the blocks behind it.
                diskLists.rewriteSkipping();
            }
            if ((method != StorageMethod.TS && diskLists.headsDirty) || tailAllocsSinceCheckpoint >= TAIL_CHECKPOINT_EVERY) {
                writeCheckpoint();
            }
        } catch (org.htod.core.HtodException e) {
            // Log mode: a failed sync changed nothing in memory, and what was not made durable is
            // still named by no record; the next sync tries again.
            throw logged ? e : failed(e);
        } finally {
            lock.unlock();
        }
    }

    void writeCheckpoint() {
        writeCheckpoint(false);
    }

    /**
     * @param emptyLists write the PL/PFL list heads as empty: coalescing does this (and syncs)
     *     before it merges blocks, so that no durable list can name a block a merge swallows
     */
    void writeCheckpoint(boolean emptyLists) {
        if (checkpointUnsynced) {
            // The two copies alternate: a second checkpoint before a sync overwrites the copy
            // holding the last durable one, and a power cut that dropped the first and tore the
            // second left only the one before both (its tail, after a coalescing moved the tail
            // back, past headers a recovery then found missing, and refused the store).
            long checkpointed = writtenCheckpointStamp;
            syncDevice();
            durableCheckpointStamp = checkpointed;
        }
        long[] heads = diskLists.heads(emptyLists);
        new Checkpoint(checkpointSeq++, tail, stamp, heads).write(dev, opt.heapOffset());
        writtenCheckpointStamp = stamp;
        checkpointUnsynced = true;
        checkpointedTail = tail;
        diskLists.headsDirty = false;
        tailAllocsSinceCheckpoint = 0;
    }

    /** A device sync: the checkpoint written last, if any, is durable. */
    void syncDevice() {
        dev.sync();
        checkpointUnsynced = false;
    }

    /**
     * Recovery believes headers past the tail checkpoint if their stamp is above the checkpoint's,
     * and after a crash restarts stamps {@link HeapRecovery#STAMP_GAP} above what it saw. That is
     * sound while no write on disk carries a stamp more than the gap above the durable checkpoint,
     * which this keeps true by checkpointing (two syncs) long before the gap could be reached.
     */
    private void keepStampsNearCheckpoint() {
        if (stamp - durableCheckpointStamp > HeapRecovery.STAMP_GAP / 4) {
            sync();
            writeCheckpoint();
            sync();
        }
    }

    /**
     * Coalesces all adjacent free blocks now (deferred coalescing, run on demand). In log mode the
     * merge is made in memory only (see {@code Coalescer.mergeInMemory}).
     */
    public void coalesce() {
        lock.lock();
        try {
            ensureWritable();
            Coalescer.coalesce(this);
        } catch (org.htod.core.HtodException e) {
            throw failed(e);
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- inspection

    public HeapStats stats() {
        lock.lock();
        try {
            return new HeapStats(allocatedCount, allocatedBytes, requestedBytes, lists.freeCount(), lists.freeBytes(),
                    tail, tail - start, highWater - start, end - start, coalesces);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reads every header and checks the heap's invariants (see {@code HeapVerifier}); throws
     * {@link CorruptStoreException} naming the first violation.
     */
    public HeapVerifyReport verify() {
        return verify(org.htod.core.StepListener.NONE, -1);
    }

    /** {@link #verify()}, telling {@code progress} of the headers read so far, of {@code total} (an estimate). */
    public HeapVerifyReport verify(org.htod.core.StepListener progress, long total) {
        ensureOpen();
        return HeapVerifier.verify(this, progress, total);
    }

    public HeapRecoveryReport recoveryReport() {
        return report;
    }

    /**
     * Visits every allocated block by scanning the headers from the heap start to the tail. Reads
     * only. While the open of a PL or PFL heap that recovered by its lists is pending ({@link
     * #prepare}), a scan that completes also keeps the free blocks it met, from which {@link
     * #finishOpen()} rebuilds the free lists without reading the headers again.
     */
    public void forEachAllocated(BlockVisitor visitor) {
        ensureOpen();
        HeapVerifier.forEachAllocated(this, visitor);
    }

    /** Callback of {@link #forEachAllocated}. */
    @FunctionalInterface
    public interface BlockVisitor {
        void visit(long handle, int length);
    }

    /** Where a clean shutdown left the snapshot of the free lists; recorded by the caller in the superblock. */
    public record SnapshotRef(long offset, long length) {}

    /**
     * Clean shutdown: writes a snapshot of the in-memory state past the tail, syncs, and returns
     * where it is, or null when there is no room for it (the next open then recovers by the
     * method's own means). The heap is closed afterwards; the device is not.
     */
    public SnapshotRef shutdown() {
        lock.lock();
        try {
            if (closed || recoveryWritesPending || failure != null) {
                return null; // after a failed change the lists are in doubt: the next open recovers
            }
            if (diskLists.anySkipping() && !logged) {
                // The snapshot names each free block's successor by list order; some next
                // pointers on disk may skip blocks (DiskLists#durableFrom): make them agree.
                try {
                    syncDevice();
                    markDurable();
                    diskLists.rewriteSkipping();
                } catch (org.htod.core.HtodException e) {
                    failed(e);
                    return null;
                }
            }
            SnapshotRef ref = Snapshot.write(this);
            syncDevice();
            closed = true;
            return ref;
        } finally {
            lock.unlock();
        }
    }

    /** Closes without a snapshot (as a crash would leave it, but with every write synced). */
    @Override
    public void close() {
        lock.lock();
        try {
            if (!closed) {
                syncDevice();
                closed = true;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@link #ensureOpen()}, no device error met in the middle of a change, and no write recovery
     * still owes: a change now would go before them.
     */
    void ensureWritable() {
        ensureOpen();
        ensureUnfailed();
        if (recoveryWritesPending) {
            throw new IllegalStateException("the heap of " + dev.name() + " is open for reading only until finishOpen()");
        }
    }

    /**
     * Reads need only this: a device error in the middle of a change leaves the free lists in
     * doubt, never an allocated block's bytes, so reads go on (a full disk keeps the store readable).
     */
    void ensureOpen() {
        if (closed) {
            throw new StoreClosedException("the heap of " + dev.name() + " is closed");
        }
    }

    /** Whether a device error in the middle of a change made the heap refuse changes until reopened. */
    boolean refusesChanges() {
        return failure != null;
    }

    /** The device error in the middle of a change that made the heap refuse changes until reopened, or null. */
    public org.htod.core.HtodException failure() {
        return failure;
    }

    /** Refuses what relies on the free lists matching the disk after a change failed midway. */
    private void ensureUnfailed() {
        if (failure != null) {
            throw new org.htod.core.HtodException("the heap of " + dev.name() + " refuses changes after a device error in"
                    + " the middle of one (" + failure.getMessage() + "); close and reopen the store to recover", failure);
        }
    }

    public BlockDevice device() {
        return dev;
    }

    public StorageMethod method() {
        return method;
    }

    public int grain() {
        return grain;
    }

    /** Address of the first block. */
    public long firstBlock() {
        return start;
    }

    /** Current tail: the first byte never allocated since the last coalescing. */
    public long tail() {
        lock.lock();
        try {
            return tail;
        } finally {
            lock.unlock();
        }
    }
}
