package org.htod.table;

import java.util.ArrayList;
import java.util.List;
import org.htod.core.alloc.Heap;

/**
 * Syncs of one store, shared by its tables: coalesces concurrent sync requests (group sync) and
 * frees the blocks that were waiting for one.
 *
 * <p>A sync covers a caller if it started after the caller asked, since every write the caller
 * made had returned by then. Callers that arrive while a sync is in flight wait for it, then one
 * of them runs the next sync for all of them.
 *
 * <p>A block unlinked from a table is not freed at once: the write that unlinked it might not be
 * durable, and a crash would then bring back a link to a block the allocator has meanwhile handed
 * to someone else. {@link #retire} queues it instead; the next sync to start frees it right after
 * the device sync returns, before that sync is reported done. So when {@link #sync()} returns,
 * every block retired before the call has been freed (the frees themselves become durable at the
 * following sync; a crash before that leaves them allocated and unreachable, and recovery frees
 * them again).
 */
final class SyncGate {
    private final Heap heap;
    final EntryCache cache;
    private long started;
    private long done;
    private boolean inFlight;
    private List<Long> retired = new ArrayList<>();
    private long syncs;

    SyncGate(Heap heap, EntryCache cache) {
        this.heap = heap;
        this.cache = cache;
    }

    /** Queues {@code handle} to be freed after the next sync. */
    synchronized void retire(long handle) {
        retired.add(handle);
    }

    synchronized int retiredCount() {
        return retired.size();
    }

    /** Device syncs run so far. */
    synchronized long syncCount() {
        return syncs;
    }

    /** Makes every write that returned before this call durable, then frees the retired blocks. */
    void sync() {
        long mine;
        List<Long> batch;
        synchronized (this) {
            long target = started + 1;
            while (true) {
                if (done >= target) {
                    return;
                }
                if (!inFlight) {
                    break;
                }
                waitQuietly();
            }
            inFlight = true;
            mine = ++started;
            batch = retired;
            retired = new ArrayList<>();
        }
        boolean ok = false;
        try {
            heap.sync();
            for (int i = 0; i < batch.size(); i++) {
                cache.drop(batch.get(i));
                heap.free(batch.get(i));
            }
            ok = true;
        } finally {
            synchronized (this) {
                inFlight = false;
                syncs++;
                if (ok) {
                    done = mine;
                } else {
                    started--;
                }
                notifyAll();
            }
        }
    }

    private void waitQuietly() {
        try {
            wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new org.htod.core.HtodException("interrupted while waiting for a sync of " + heap.device().name(), e);
        }
    }
}
