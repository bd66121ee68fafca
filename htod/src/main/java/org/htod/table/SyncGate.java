package org.htod.table;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.htod.core.alloc.Heap;

/**
 * The order of a store's writes, shared by its tables: link writes wait in memory for the sync
 * that makes their targets durable, unlinked blocks wait for the sync that makes their unlinking
 * durable, and concurrent sync requests share one device sync (group commit).
 *
 * <h2>Links wait for a flush</h2>
 *
 * A link (a bucket slot, or an entry's {@code next}) may reach the disk only after the entry it
 * names is durable, or a crash could keep the link and lose the entry, and with it the rest of
 * the chain. Rather than sync between every entry and its link, a table hands the link to {@link
 * #setLink}: it is kept in memory, where every reader of the chain sees it ({@link #pendingLink}),
 * and a <em>flush</em> writes it later, after one device sync that covers every entry written
 * before the flush began. A flush therefore costs one sync for any number of links, and writes
 * them in ascending device order. Flushes run when {@link #maxPendingLinks} links or blocks wait
 * ({@link #flushIfFull}), and on every {@link #sync}.
 *
 * <h2>Blocks wait for the sync after their unlinking</h2>
 *
 * A block unlinked from a table is handed to {@link #retire}, after the link that unlinks it. It
 * is freed only once that link is durable, so that no durable link ever names a block the
 * allocator may hand to someone else: by a durable {@link #sync} (which syncs after writing its
 * links), or else by the first sync of the next flush. The frees themselves become durable at a
 * later sync; a crash before that leaves the blocks allocated and unreachable, and recovery frees
 * them again.
 *
 * <h2>Readers</h2>
 *
 * A link is set under the view write lock of its stripe, and a flush writes it, and updates the
 * entry cache, under the same lock; readers hold that lock's read side while they follow links.
 * So a reader sees a link either in memory or on disk (and in the cache) with the same value,
 * never a stale copy. The links not on disk are in one of two maps, the waiting ones and those
 * of the flush in flight, which a flush replaces rather than empties: the pair is one immutable
 * {@link Waiting}, published whole by a volatile write, so a reader reads both as of one moment.
 * A flush publishes its links as the flush's map and a fresh waiting map in one step, and once
 * they are all written, an empty flush's map; one that fails publishes its links, merged with
 * those set meanwhile, as the waiting map. Each state holds every link not written, and a reader
 * that looked before a change still holds maps with every link it could need. (Two volatile
 * fields, read one after the other, once let a reader read the waiting map before a failed flush
 * and the flush's map after it, find the link in neither, and follow the disk's stale copy.)
 */
final class SyncGate {
    /** Links or unlinked blocks waiting before a writer flushes them. */
    private final int maxPendingLinks;
    /** Slot links of one segment closer than this are written as one run ({@link #writeSlotRun}); 0 for none. */
    private final int slotRunBytes;

    private final Heap heap;
    final EntryCache cache;
    /** The tables' bucket slots in memory; every slot write below keeps it equal to the disk. */
    final SlotCache slots;

    /**
     * A link write waiting for its flush: {@code target} to be written at {@code offset} of
     * {@code block}, with its check salted by {@code salt} (see {@link Links}).
     */
    record Link(long block, long offset, long target, long salt, ReentrantReadWriteLock view, boolean isNext) {}

    /**
     * The links not on disk, by device address: {@code pending}, set since the last flush began
     * (setLink adds to it in place), and {@code flushing}, those of the flush in flight until it
     * has written them all. Never changed but by a new pair, published under this.
     */
    record Waiting(Map<Long, Link> pending, Map<Long, Link> flushing) {
        /** The link at {@code key}, the waiting one first: it is the newer. */
        Link get(long key) {
            Link l = pending.get(key);
            return l != null ? l : flushing.get(key);
        }

        boolean isEmpty() {
            return pending.isEmpty() && flushing.isEmpty();
        }
    }

    private volatile Waiting waiting = new Waiting(new ConcurrentHashMap<>(), Map.of());
    /** Blocks unlinked by waiting links (or earlier). Guarded by this. */
    private List<Long> retired = new ArrayList<>();
    /** Blocks unlinked by links that the last flush wrote but did not sync. Touched by the flush in flight only. */
    private List<Long> awaiting = new ArrayList<>();
    /** Links and blocks that a flush would take now: new addresses among the waiting links plus {@link #retired}. */
    private volatile int queued;

    /** Entries written since the last device sync began, perhaps fewer durable than counted. Guarded by this. */
    private long unsyncedEntries;

    // Flush coordination, guarded by this.
    private boolean inFlight;
    private long durableStarted;
    private long durableDone;
    /**
     * Whether a flush failed and left its links in memory for the next one, with no durable
     * flush since: the one state a write at SYNC may see that is not durable, since a write holds
     * its stripe's writer lock through its own flush and sync.
     */
    private boolean keptLinks;
    /**
     * Log mode: blocks a durable install record frees whose links, or whose frees, then failed, to
     * be freed, not recorded again, once a later commit has written the links.
     */
    private List<Long> recordedUnfreed = new ArrayList<>();
    private long syncs;

    /** Log mode: commits go through the log (see {@link Installer}); null in direct mode. */
    private final Installer installer;

    /** Installation reads: chain entries the installs loaded from the device, and from the entry cache. */
    private final AtomicLong installReads = new AtomicLong();
    private final AtomicLong installReadsCached = new AtomicLong();

    SyncGate(Heap heap, EntryCache cache, int maxPendingLinks, Installer installer) {
        this(heap, cache, new SlotCache(0), maxPendingLinks, TableOptions.DEFAULT_SLOT_RUN_BYTES, installer);
    }

    SyncGate(Heap heap, EntryCache cache, SlotCache slots, int maxPendingLinks, int slotRunBytes,
            Installer installer) {
        this.heap = heap;
        this.cache = cache;
        this.slots = slots;
        this.maxPendingLinks = maxPendingLinks;
        this.slotRunBytes = slotRunBytes;
        this.installer = installer;
    }

    private long key(long block, long offset) {
        return heap.address(block) + offset;
    }

    /**
     * Records that the link at {@code offset} of {@code block} now names {@code target}; the
     * caller holds {@code view}'s write lock, and has written {@code target} whole before.
     */
    synchronized void setLink(long block, long offset, long target, long salt, ReentrantReadWriteLock view,
            boolean isNext) {
        if (waiting.pending.put(key(block, offset), new Link(block, offset, target, salt, view, isNext)) == null) {
            queued++;
        }
    }

    /** The waiting link at {@code offset} of {@code block}, or null if the disk holds the current value. */
    Link pendingLink(long block, long offset) {
        Waiting w = waiting; // one read: both maps as of one moment
        return w.isEmpty() ? null : w.get(key(block, offset));
    }

    /** The links not on disk now, for a test that looks at them across a flush. */
    Waiting waiting() {
        return waiting;
    }

    /** The current value of a link whose disk copy is {@code onDisk}. */
    long linkAt(long block, long offset, long onDisk) {
        Link l = pendingLink(block, offset);
        return l == null ? onDisk : l.target;
    }

    /** An install round walked chains, loading {@code loaded} entries, {@code cached} of them from the entry cache. */
    void installRead(int loaded, int cached) {
        installReads.addAndGet(loaded - cached);
        installReadsCached.addAndGet(cached);
    }

    /** Installation reads so far: {device, entry cache}, the second the reads the cache avoided (paper 002, §4.3). */
    long[] installReads() {
        return new long[] {installReads.get(), installReadsCached.get()};
    }

    /** Counts entries just written, which links set from now on may name. */
    synchronized void entriesWritten(int n) {
        unsyncedEntries += n;
    }

    /** Queues {@code handle} to be freed once the link that unlinked it (set before this call) is durable. */
    synchronized void retire(long handle) {
        retired.add(handle);
        queued++;
    }

    /** Log mode: {@code t}'s count or shape changed, and the next commit records its state. */
    void touch(HashtableOnDisk t) {
        if (installer != null) {
            installer.touch(t);
        }
    }

    /**
     * Most old buckets a logged doubling batch of a table at {@code loadPermille} may move: its
     * install record must fit in the flusher's budget. A bucket costs two slot links and a next
     * link for each entry of its chain that the split relinks, at most its entries: counted here
     * as twice the load factor, so that a batch's chains may run to twice their mean length.
     */
    int maxDoublingBatch(int loadPermille) {
        if (installer == null) {
            return Integer.MAX_VALUE;
        }
        long linksPerBucket = 2 + (2L * loadPermille + 999) / 1000;
        long buckets = installer.maxRecordBytes() / (InstallRecord.LINK_BYTES * linksPerBucket);
        return (int) Math.max(1, Long.highestOneBit(Math.max(1, buckets)));
    }

    /** Bytes one install record of the flusher aims at (see {@link Installer#maxRecordBytes}); no bound in direct mode. */
    long recordBudget() {
        return installer == null ? Long.MAX_VALUE : installer.maxRecordBytes();
    }

    /**
     * Log mode, before a table takes new changes: what a failed commit left waiting (its links,
     * the blocks they unlink, and in the installer its allocations) is committed alone first.
     * Recorded with the new changes instead, every retry after a failure recorded those of the
     * tries before it too, and a run of failures (a device that fails its writes for a while)
     * grew one record past the log's limit. So a record holds at most one commit's changes, or
     * this throws, and nothing new is added until the leftovers are recorded.
     */
    void commitLeftovers() {
        synchronized (this) {
            if (installer == null || !keptLinks) {
                return;
            }
        }
        sync();
    }

    /** Whether commits go through the log. */
    boolean logged() {
        return installer != null;
    }

    /** Log mode: {@code t}, created by a change that failed, is named by no record after all. */
    void untouch(HashtableOnDisk t) {
        installer.untouch(t);
    }

    /** Log mode: a mark of the allocations no record names yet, for {@link #freeAllocatedSince}. */
    int allocationMark() {
        return installer.allocationCount();
    }

    /** Log mode: frees the blocks allocated since {@code mark}, for a change that failed before any record named them. */
    void freeAllocatedSince(int mark) {
        for (long h : installer.allocatedSince(mark)) {
            cache.drop(h);
            slots.drop(h);
            heap.free(h); // the journal drops it from the allocations: no record will name it
        }
    }

    /**
     * Log mode's recovery: links the log recorded, whose in-place writes a crash may have lost.
     * They wait like any link, so that every reader already sees them, until {@link
     * #writeRecovered} writes them once the open may write.
     */
    synchronized void recovered(List<InstallRecord.LinkWrite> links) {
        // No reader runs before the open ends, so one lock stands for every stripe's view. A link
        // at offset 0 may be an entry's next or a segment's first slot: it is written as a next
        // (the entry cache never holds a segment), and writeRecovered forgets the slots' copy.
        ReentrantReadWriteLock view = new ReentrantReadWriteLock();
        for (InstallRecord.LinkWrite l : links) {
            waiting.pending.put(key(l.block(), l.offset()), new Link(l.block(), l.offset(), l.value(), l.salt(), view,
                    l.offset() == Entries.NEXT_OFFSET));
        }
    }

    /**
     * Writes the recovered links in place: the log holds them already, so no record is made. A
     * link at offset 0 of its block was taken for an entry's {@code next} (see {@link
     * #recovered}), but may be the first slot of a bucket segment, whose copy in the slot cache
     * the open may have loaded from the disk while the link waited: that copy is forgotten, to be
     * loaded again with the link. Kept, it hid the chain of the segment's first bucket after the
     * open (a map whose name lay in the catalog's bucket 0 was gone after a crash).
     */
    void writeRecovered() {
        Map<Long, Link> links;
        synchronized (this) {
            links = takeWaiting();
        }
        writeLinks(links);
        for (Link l : links.values()) {
            if (l.isNext()) {
                slots.forget(l.block());
            }
        }
        written();
    }

    /** Publishes the waiting links as the flush's and a fresh waiting map; the caller holds this. */
    private Map<Long, Link> takeWaiting() {
        Map<Long, Link> links = waiting.pending;
        waiting = new Waiting(new ConcurrentHashMap<>(), links);
        return links;
    }

    /** The flush in flight has written its links: they are on disk, and in the caches, now. */
    private synchronized void written() {
        waiting = new Waiting(waiting.pending, Map.of());
    }

    /** Links and blocks that the next flush would take. */
    int queued() {
        return queued;
    }

    /** Whether any link or block waits, or a flush is in flight. */
    synchronized boolean busy() {
        return inFlight || !waiting.pending.isEmpty() || !retired.isEmpty() || !awaiting.isEmpty();
    }

    /** Device syncs run so far. */
    synchronized long syncCount() {
        return syncs;
    }

    /**
     * Flushes the waiting links when there are many. A writer calls it after its operation,
     * holding no lock, and waits for a flush in flight: that is the back-pressure that bounds
     * what waits in memory.
     */
    void flushIfFull() {
        if (installer == null && queued >= maxPendingLinks) {
            flush(maxPendingLinks);
        }
    }

    /** Writes the waiting links now (a flush that is not durable: the blocks they unlink wait for the next). */
    void flush() {
        flush(1);
    }

    private void flush(int atLeast) {
        Batch b;
        synchronized (this) {
            awaitFlushUnless(() -> false);
            if (queued < atLeast) {
                return; // another writer flushed meanwhile
            }
            b = begin(false);
        }
        run(b);
    }

    /**
     * Makes every write and link set before this call durable, and frees the blocks retired
     * before it. Concurrent callers share one flush.
     */
    void sync() {
        Batch b;
        synchronized (this) {
            long target = durableStarted + 1;
            awaitFlushUnless(() -> durableDone >= target);
            if (durableDone >= target) {
                return;
            }
            b = begin(true);
        }
        run(b);
    }

    /**
     * At durability SYNC, for an operation that changed nothing: makes durable what it read if
     * that may be a change not durable yet, a link a failed flush kept ({@link #keptLinks}): a
     * removal that finds its key absent through it must not return before the removal is
     * durable. Otherwise it costs nothing.
     */
    void syncIfUnsynced() {
        synchronized (this) {
            if (!keptLinks) {
                return;
            }
        }
        sync();
    }

    /** What one flush writes and frees; {@code takesKept}: it takes the links a failed flush kept. */
    private record Batch(Map<Long, Link> links, List<Long> unlinked, boolean durable, long number, long entries,
            boolean takesKept) {}

    /** Takes the waiting links and blocks for a flush; the caller holds this and has seen no flush in flight. */
    private Batch begin(boolean durable) {
        inFlight = true;
        long number = durable ? ++durableStarted : 0;
        Map<Long, Link> links = takeWaiting();
        List<Long> unlinked = retired;
        retired = new ArrayList<>();
        queued = 0;
        return new Batch(links, unlinked, durable, number, unsyncedEntries, keptLinks);
    }

    private void run(Batch b) {
        boolean ok = false;
        try {
            if (installer != null) {
                runLogged(b);
            } else {
                runDirect(b);
            }
            ok = true;
        } catch (RuntimeException e) {
            restore(b);
            throw e;
        } finally {
            synchronized (this) {
                inFlight = false;
                if (b.durable) {
                    if (ok) {
                        durableDone = b.number;
                        if (b.takesKept) {
                            keptLinks = false;
                        }
                    } else {
                        durableStarted--;
                    }
                }
                notifyAll();
            }
        }
    }

    private void runDirect(Batch b) {
        // Every entry named by b.links must be durable before they are written, and the links
        // of the last flush before the blocks they unlinked are freed. When no entry was
        // written since the last sync and nothing waits to be freed (a removal at SYNC), this
        // sync has nothing to order and is left out.
        if (b.entries > 0 || !awaiting.isEmpty() || b.links.isEmpty()) {
            deviceSync();
            synchronized (this) {
                unsyncedEntries -= b.entries; // written before the sync began
            }
        }
        freeAll(awaiting);
        if (b.links.isEmpty()) {
            // The links that unlinked these blocks were written before the sync above.
            written();
            freeAll(b.unlinked);
        } else {
            writeLinks(b.links);
            written();
            if (b.durable) {
                deviceSync();
                freeAll(b.unlinked);
            } else {
                awaiting.addAll(b.unlinked);
                b.unlinked.clear();
            }
        }
    }

    /**
     * Log mode: the links, the blocks they unlink and every allocation since the last commit are
     * recorded in the log and made durable there first; then the links are written in place and
     * the blocks freed. A crash after the record is redone from the log; a crash before it loses
     * nothing the log does not hold.
     */
    private void runLogged(Batch b) {
        installer.record(b.links, b.unlinked, heap);
        syncs++;
        List<Long> earlier;
        synchronized (this) {
            earlier = recordedUnfreed;
            recordedUnfreed = new ArrayList<>();
        }
        try {
            writeLinks(b.links);
            written();
            installer.freeRecorded(() -> {
                freeAll(b.unlinked);
                freeAll(earlier);
            });
        } catch (RuntimeException e) {
            // The record is durable and lists these frees (an earlier one those of `earlier`):
            // recorded again by the next commit, they would be freed twice by a replay, which
            // refuses such a log. The next commit writes the links again if they were not
            // (restore), and frees what is left of these blocks without recording them.
            synchronized (this) {
                recordedUnfreed.addAll(earlier);
                recordedUnfreed.addAll(b.unlinked);
            }
            b.unlinked.clear();
            throw e;
        }
    }

    /**
     * A flush failed: what it had taken goes back, to be written and freed by the next one. Links
     * of a flush that failed while writing them are written again, with the same value; newer
     * links set meanwhile win.
     */
    private synchronized void restore(Batch b) {
        keptLinks = true;
        // Links the flush wrote whole (it published that: the pair no longer holds them as in
        // flight) stay written; a later step failed, a sync or a free. Put back, they would be
        // written again by the next flush, into blocks this one may have freed meanwhile (an
        // entry's next, the entry retired in the same batch) and the heap handed out again.
        boolean written = waiting.flushing != b.links;
        Map<Long, Link> back = new ConcurrentHashMap<>(written ? Map.of() : b.links);
        back.putAll(waiting.pending);
        // One step: a reader sees the old pair, where each link is in one of the two maps, or
        // this one, where all are in the first.
        waiting = new Waiting(back, Map.of());
        List<Long> blocks = new ArrayList<>(b.unlinked);
        blocks.addAll(retired);
        retired = blocks;
        queued = back.size() + retired.size();
    }

    private void deviceSync() {
        heap.sync();
        synchronized (this) {
            syncs++;
        }
    }

    /** Frees the blocks, taking each off the list as it goes, so that a failure leaves the rest to free. */
    private void freeAll(List<Long> blocks) {
        while (!blocks.isEmpty()) {
            long h = blocks.get(blocks.size() - 1);
            cache.drop(h);
            slots.drop(h);
            heap.free(h);
            blocks.remove(blocks.size() - 1);
        }
    }

    /**
     * Writes the links in ascending device order, each under its stripe's view lock, the cache kept
     * equal: bucket slots of one segment less than {@link #slotRunBytes} apart as one run ({@link
     * #writeSlotRun}), every other link by itself. Runs exist because an install batch sets
     * thousands of slots, a few in each page of a large array, and a write each was a system call
     * each (a quarter of the flusher's processor time, 64 writers of 200-byte values on 2 cores).
     */
    private void writeLinks(Map<Long, Link> links) {
        List<Map.Entry<Long, Link>> sorted = new ArrayList<>(links.entrySet());
        sorted.sort(Map.Entry.comparingByKey(Comparator.naturalOrder()));
        for (int i = 0; i < sorted.size(); ) {
            int end = slotRunEnd(sorted, i);
            if (end - i >= 2 && writeSlotRun(sorted.subList(i, end))) {
                i = end;
                continue;
            }
            Link l = sorted.get(i).getValue();
            Lock w = l.view.writeLock();
            w.lock();
            try {
                writeNow(l.block, l.offset, l.target, l.salt, l.isNext);
            } finally {
                w.unlock();
            }
            i++;
        }
    }

    /** The end of the run of slot links that begins at {@code i} ({@code i + 1} if none). */
    private int slotRunEnd(List<Map.Entry<Long, Link>> sorted, int i) {
        Link first = sorted.get(i).getValue();
        long start = sorted.get(i).getKey();
        int j = i + 1;
        if (first.isNext) {
            return j;
        }
        while (j < sorted.size()) {
            Link l = sorted.get(j).getValue();
            if (l.isNext || l.block != first.block || sorted.get(j).getKey() - start >= slotRunBytes) {
                break;
            }
            j++;
        }
        return j;
    }

    /**
     * Writes a run of slot links of one segment as one device write of the slots from the first
     * to the last, the slots between written back with the values the segment's copy holds (the
     * disk's: see {@link SlotCache.Segment#writeRun}). Under the view write locks of the links'
     * stripes, taken in stripe order as every taker of several view locks does. Returns false,
     * writing nothing, when the segment's copy is not held (or a link's salt is not its bucket),
     * and the links are then written one by one.
     */
    private boolean writeSlotRun(List<Map.Entry<Long, Link>> run) {
        Link first = run.get(0).getValue();
        Link last = run.get(run.size() - 1).getValue();
        int from = (int) (first.offset / BucketArray.SLOT_SIZE);
        long[] targets = new long[(int) ((last.offset - first.offset) / BucketArray.SLOT_SIZE) + 1];
        Arrays.fill(targets, -1);
        TreeMap<Integer, ReentrantReadWriteLock> views = new TreeMap<>();
        for (Map.Entry<Long, Link> e : run) {
            Link l = e.getValue();
            int k = (int) (l.offset / BucketArray.SLOT_SIZE) - from;
            if (l.offset % BucketArray.SLOT_SIZE != 0 || l.salt != first.salt + k) {
                return false; // a slot's salt is its bucket; anything else is written as it came
            }
            targets[k] = l.target;
            views.put(HashtableOnDisk.stripe(l.salt), l.view);
        }
        List<Lock> held = new ArrayList<>(views.size());
        try {
            for (ReentrantReadWriteLock v : views.values()) {
                Lock w = v.writeLock();
                w.lock(); // reentrant: the open's recovery gives every link one lock
                held.add(w);
            }
            return slots.of(first.block).writeRun(from, targets,
                    values -> heap.writeAt(first.block, first.offset, BucketArray.encodeRun(first.salt, values)));
        } finally {
            for (int i = held.size() - 1; i >= 0; i--) {
                held.get(i).unlock();
            }
        }
    }

    /**
     * Writes a link to the disk at once, and to the copy in memory: an entry's {@code next} to
     * the entry cache, a bucket slot to the slot cache. One aligned 12-byte write.
     */
    void writeNow(long block, long offset, long target, long salt, boolean isNext) {
        ByteBuffer b = Links.encode(target, salt);
        if (isNext) {
            heap.writeAt(block, offset, b);
            cache.next(block, target, b.getInt(8));
            return;
        }
        // the segment's monitor across the write and the copy's update, even while nothing holds
        // the segment yet: a reader loading it meanwhile then reads after this write
        slots.of(block).write((int) (offset / BucketArray.SLOT_SIZE), new long[] {target},
                () -> heap.writeAt(block, offset, b));
    }

    /**
     * Under this: waits while a flush is in flight, unless {@code done} says the caller need not.
     * An interrupt does not end the wait, and is set again after it: the flush is I/O under way,
     * which ends or fails soon, and a writer at SYNC waits here after its entry is written, so that
     * an interrupt thrown out of this wait, as before, told it its write had failed while the write
     * took effect.
     */
    private void awaitFlushUnless(java.util.function.BooleanSupplier done) {
        boolean interrupted = false;
        while (inFlight && !done.getAsBoolean()) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt(); // nothing waits on this monitor after it: the caller only begins or returns
        }
    }
}
