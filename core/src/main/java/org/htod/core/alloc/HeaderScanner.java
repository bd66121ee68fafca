package org.htod.core.alloc;

import java.nio.ByteBuffer;
import org.htod.core.CorruptStoreException;
import org.htod.core.StepListener;

/**
 * Walks block headers in address order, reading the device in windows so that many small blocks
 * cost one read. Applies the remainder rule: when a block records that a split left a free
 * remainder right behind it, and the header found there is missing or older than the split, the
 * remainder is rebuilt from the record (and, when {@code repair} is set, queued to be written back
 * by {@link Heap#finishOpen()}, so that an open that fails later has written nothing).
 */
final class HeaderScanner {
    private static final int SMALL_WINDOW = 1 << 20;
    private static final int LARGE_WINDOW = 1 << 12;

    private final Heap heap;
    private ByteBuffer window = ByteBuffer.allocate(0);
    private long windowStart;
    long headersRead;
    long bytesRead;
    long repaired;
    boolean repair;
    /** Told of {@link #headersRead} every {@link StepListener#EVERY} headers, plus {@link #base}, of {@link #total}. */
    StepListener progress = StepListener.NONE;
    long base;
    long total = -1;
    /** Where {@link #repair} queues the headers it rebuilds: the heap's, unless a caller keeps them apart. */
    java.util.List<Heap.Repair> repairs;

    HeaderScanner(Heap heap) {
        this.heap = heap;
        this.repairs = heap.pendingRepairs;
    }

    @FunctionalInterface
    interface Visitor {
        void visit(long addr, BlockHeader h);
    }

    /**
     * Visits every block from {@code from} to {@code to}, which must be a block boundary. Every
     * header in this range is trusted to be there: a missing one means corruption.
     */
    void scan(long from, long to, Visitor v) {
        long pos = walk(from, to, Long.MIN_VALUE, v, true, false);
        if (pos != to) {
            throw new CorruptStoreException("heap scan of " + heap.dev.name() + " ended at offset " + pos
                    + ", expected the last block to end at " + to, pos);
        }
    }

    /**
     * Walks forward from {@code from} while headers are valid and, past the tail checkpoint,
     * created after {@code minStamp} (paper Fig. 7); returns where the walk stopped: the tail.
     */
    long walkTail(long from, long minStamp, Visitor v) {
        return walk(from, heap.end, minStamp, v, false, false);
    }

    /**
     * Recovery's scan: like {@link #scan}, but the last block may reach past {@code to}, which is
     * only the checkpointed tail, a lower bound (coalescing may have merged free space beyond a
     * stale checkpoint). Returns where the scanned blocks end, at or past {@code to}.
     */
    long scanToCheckpoint(long from, long to, Visitor v) {
        return walk(from, to, Long.MIN_VALUE, v, true, true);
    }

    private long walk(long pos, long limit, long minStamp, Visitor v, boolean trusted, boolean mayCross) {
        long expectRemainderAt = -1;
        long remainderSize = 0;
        long remainderStamp = 0;
        while (pos < limit) {
            BlockHeader h = pos + BlockHeader.SIZE <= heap.dev.size() ? headerAt(pos) : null;
            if (pos == expectRemainderAt && (h == null || h.stamp < remainderStamp)) {
                h = rebuildRemainder(pos, remainderSize, remainderStamp);
            } else if (h == null || (!trusted && h.stamp <= minStamp)) {
                if (trusted) {
                    throw new CorruptStoreException("expected a block header at offset " + pos + " in " + heap.dev.name()
                            + " (heap blocks end at " + limit + "), found none valid", pos);
                }
                return pos;
            }
            if (pos + h.size > heap.end || (trusted && !mayCross && pos + h.size > limit)) {
                if (trusted) {
                    throw new CorruptStoreException("block at offset " + pos + " in " + heap.dev.name() + " has size "
                            + h.size + ", past the end " + limit, pos);
                }
                return pos;
            }
            v.visit(pos, h);
            if (h.remainder > 0) {
                expectRemainderAt = pos + h.size;
                remainderSize = h.remainder;
                remainderStamp = h.stamp;
            }
            pos += h.size;
        }
        return pos;
    }

    private BlockHeader rebuildRemainder(long pos, long size, long stamp) {
        int listId = heap.method == org.htod.core.container.StorageMethod.TS ? BlockHeader.NO_LIST : heap.lists.listOf(size);
        BlockHeader h = new BlockHeader(size, stamp, 0, listId, false, 0, 0);
        if (repair) {
            ByteBuffer b = ByteBuffer.allocate(BlockHeader.SIZE);
            BlockHeader.put(b, 0, heap.code, size, stamp, 0, listId, false, 0, 0, heap.grain);
            repairs.add(new Heap.Repair(pos, b));
        }
        repaired++;
        return h;
    }

    /** The valid header at {@code pos}, or null: none there, or the device ends before one would. */
    BlockHeader headerAt(long pos) {
        if (pos < windowStart || pos + BlockHeader.SIZE > windowStart + window.limit()) {
            int want = window.limit() > 0 && lastWasLarge ? LARGE_WINDOW : SMALL_WINDOW;
            long avail = heap.dev.size() - pos;
            if (avail < BlockHeader.SIZE) {
                // A file cut short: the tail held in memory (a log-mode open reads no headers) lies
                // past its end. No header there, which the caller reports as damage with where;
                // a buffer of the negative or short remainder threw untyped.
                return null;
            }
            int len = (int) Math.min(want, avail);
            window = ByteBuffer.allocate(len);
            heap.dev.read(pos, window);
            window.flip();
            windowStart = pos;
            bytesRead += len;
        }
        if ((++headersRead & (StepListener.EVERY - 1)) == 0) {
            progress.step(base + headersRead, total);
        }
        BlockHeader h = BlockHeader.decode(window, (int) (pos - windowStart), heap.code, heap.grain);
        lastWasLarge = h != null && h.size > SMALL_WINDOW / 16;
        return h;
    }

    private boolean lastWasLarge;
}
