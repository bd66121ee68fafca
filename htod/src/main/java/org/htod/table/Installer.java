package org.htod.table;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.htod.core.HtodException;
import org.htod.core.alloc.Heap;
import org.htod.core.log.Log;

/**
 * Log mode's side of the {@link SyncGate}: what a commit of the tables writes in place is first
 * recorded in the log, as one {@link InstallRecord}, and made durable there (redo). Collects, as
 * the heap's journal, every block allocated since the last commit (their contents are synced
 * with the record), the blocks freed outside a commit, and the tables whose count or shape
 * changed.
 *
 * <p>One installer at a time: every change of a logged store's heap and tables runs with the
 * write layer's install lock held, so this class needs no lock of its own beyond the heap's,
 * under which the journal calls arrive.
 */
public final class Installer implements Heap.Journal {
    private final Log log;
    private final List<Long> allocs = new ArrayList<>();
    private final List<Long> frees = new ArrayList<>();
    private final Set<HashtableOnDisk> touched = new LinkedHashSet<>();
    /** While a commit frees what its record lists: those frees are in the record already. */
    private boolean committing;
    private long commits;
    private long recordBytes;
    /** Commits that went out as install units of several records. */
    private long units;

    public Installer(Log log) {
        this.log = log;
    }

    @Override
    public synchronized void allocated(long handle) {
        if (!committing) {
            allocs.add(handle);
        }
    }

    @Override
    public synchronized void freed(long handle) {
        if (committing) {
            return;
        }
        if (!allocs.remove(handle)) { // allocated and freed before any record named it: nothing to say
            frees.add(handle);
        }
    }

    synchronized void untouch(HashtableOnDisk t) {
        touched.remove(t);
    }

    synchronized int allocationCount() {
        return allocs.size();
    }

    /** The blocks allocated since there were {@code mark} (see {@link #allocationCount}), newest first. */
    synchronized List<Long> allocatedSince(int mark) {
        List<Long> out = new ArrayList<>(allocs.subList(Math.min(mark, allocs.size()), allocs.size()));
        java.util.Collections.reverse(out);
        return out;
    }

    /** {@code t}'s count or shape changed: the next record carries its state. */
    synchronized void touch(HashtableOnDisk t) {
        touched.add(t);
    }

    /** Whether anything waits to be recorded. */
    synchronized boolean idle() {
        return allocs.isEmpty() && frees.isEmpty() && touched.isEmpty();
    }

    /**
     * Records the links, and frees the blocks they unlink, together with what was collected, and
     * waits until the record is durable. Nothing is forgotten if it fails: the caller keeps the
     * links and blocks for the next commit, and what was collected stays.
     */
    void record(Map<Long, SyncGate.Link> links, List<Long> unlinked, Heap heap) {
        InstallRecord r;
        synchronized (this) {
            List<InstallRecord.LinkWrite> lw = new ArrayList<>(links.size());
            for (SyncGate.Link l : links.values()) {
                lw.add(new InstallRecord.LinkWrite(l.block(), (int) l.offset(), l.target(), l.salt()));
            }
            long[] f = new long[frees.size() + unlinked.size()];
            int i = 0;
            for (long h : frees) {
                f[i++] = h;
            }
            for (long h : unlinked) {
                f[i++] = h;
            }
            List<InstallRecord.TableState> states = new ArrayList<>(touched.size());
            for (HashtableOnDisk t : touched) {
                states.add(t.state());
            }
            r = new InstallRecord(toArray(allocs), f, lw, states);
        }
        if (r.isEmpty()) {
            return;
        }
        List<InstallRecord> parts = partsOf(r, heap.device().name());
        if (r.allocs.length > 0) {
            heap.sync(); // the new blocks' contents are durable before a record can name them
        }
        Log.Appended last;
        if (parts == null) {
            last = log.appendReserved(InstallRecord.TYPE, r.encode());
        } else {
            // Consecutive among the install records (every commit holds the install lock), data
            // records of writers perhaps between them; replay takes the unit only whole, and
            // nothing of it is written in place before its last part is durable.
            last = null;
            for (int i = 0; i < parts.size(); i++) {
                last = log.appendReserved(InstallRecord.PART_TYPE, parts.get(i).encodePart(i, parts.size()));
            }
            units++;
        }
        log.awaitDurable(last);
        synchronized (this) {
            allocs.subList(0, r.allocs.length).clear();
            frees.subList(0, r.frees.length - unlinked.size()).clear();
            touched.clear();
            commits++;
            recordBytes += r.size();
        }
    }

    /**
     * {@code r} as the parts of an install unit when it exceeds the log's largest payload, or null
     * when it fits one record. A record over that was refused by every append, and the flusher
     * stopped for good on the refusal. A unit may take no more than the log keeps for the
     * flusher's records (its reserve, a quarter of the lap): a larger one could wait for room
     * that only a checkpoint, which waits for this commit, would make. Above that the commit
     * fails, typed and naming the sizes; the flusher retries it, and reads go on.
     */
    private List<InstallRecord> partsOf(InstallRecord r, String device) {
        long max = log.maxPayload();
        if (r.size() <= max) {
            return null;
        }
        List<InstallRecord> parts = r.split(max);
        long total = 0;
        for (InstallRecord p : parts) {
            total += (32L + InstallRecord.PART_HEAD + p.size() + 7) & ~7L; // header, payload, padding to 8
        }
        long ceiling = log.regionSize() / 4;
        if (total > ceiling) {
            throw new HtodException("an install record of " + r.size() + " bytes (" + r.links.size() + " links, "
                    + r.allocs.length + " allocations, " + r.frees.length + " frees) needs " + total
                    + " bytes of the log of " + device + " in " + parts.size() + " parts, over the " + ceiling
                    + " bytes kept for the flusher's records: nothing was written for it; a larger log region holds it");
        }
        return parts;
    }

    /** A block allocated for something the log does not record (a checkpoint's own block): no record names it. */
    public synchronized void forget(long handle) {
        allocs.remove(handle);
    }

    /** Runs {@code frees}, which a durable record lists already, without recording them again. */
    void freeRecorded(Runnable frees) {
        synchronized (this) {
            committing = true;
        }
        try {
            frees.run();
        } finally {
            synchronized (this) {
                committing = false;
            }
        }
    }

    /** Largest install record the flusher should write (see {@link Log#flusherRecordBudget()}). */
    long maxRecordBytes() {
        return log.flusherRecordBudget();
    }

    /** Install records written so far, and their bytes. */
    public synchronized long[] counts() {
        return new long[] {commits, recordBytes};
    }

    /** Commits written as install units of several records so far. */
    public synchronized long units() {
        return units;
    }

    /** Tables waiting to have their state recorded, for a checkpoint. */
    synchronized Collection<HashtableOnDisk> touched() {
        return new ArrayList<>(touched);
    }

    private static long[] toArray(List<Long> l) {
        long[] out = new long[l.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = l.get(i);
        }
        return out;
    }
}
