package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;
import org.htod.core.container.StorageMethod;

/**
 * The clean-shutdown snapshot of a heap's in-memory state, written past the tail so that the
 * next open reads one region instead of the heap (paper §2.1, last paragraphs). Its place is
 * recorded in the superblock; the first allocation after reopening may overwrite it.
 *
 * <pre>
 *  0  8  magic           "HTODSNAP"
 *  8  8  length          bytes of the whole snapshot, CRC included
 * 16  8  tail
 * 24  8  stamp           last creation stamp issued
 * 32  8  highWater
 * 40  8  allocatedBytes
 * 48  8  requestedBytes
 * 56  8  allocatedCount
 * 64  8  coalesces
 * 72  4  lists           number of PL list heads that follow (0 for TS and PFL)
 * 76  8  freeCount
 * 84     heads           lists × 8: PL disk list heads
 *        free blocks     freeCount × 12: address/grain 8, size/grain 4. PFL writes them in
 *                        list order, list by list, so its lists and next pointers are rebuilt
 *                        exactly; a PL block's own list link is read from its header the first
 *                        time a split needs it. Stamps are not kept: after a clean close every
 *                        extent is durable.
 * end-4  4  crc32c       of everything before it
 * </pre>
 */
final class Snapshot {
    static final long MAGIC = 0x48544F44534E4150L; // "HTODSNAP"
    private static final int FIXED = 84;
    private static final int PER_BLOCK = 12;

    private Snapshot() {}

    static Heap.SnapshotRef write(Heap h) {
        ByteBuffer b = encode(h);
        long len = b.remaining();
        if (h.tail > h.end - len) {
            return null;
        }
        h.dev.write(h.tail, b);
        return new Heap.SnapshotRef(h.tail, len);
    }

    /** The heap's state in the snapshot format, positioned at 0. */
    static ByteBuffer encode(Heap h) {
        return encode(h, 0);
    }

    /** The heap's state in the snapshot format, with the block {@code alsoFree} (a handle; 0 for none) counted free. */
    static ByteBuffer encode(Heap h, long alsoFree) {
        return encode(h, alsoFree == 0 ? new long[0] : new long[] {alsoFree});
    }

    /** The heap's state in the snapshot format, with the blocks {@code alsoFree} (handles) counted free. */
    static ByteBuffer encode(Heap h, long[] alsoFree) {
        List<FreeBlock> blocks = ordered(h);
        long allocatedBytes = h.allocatedBytes;
        long allocatedCount = h.allocatedCount;
        if (alsoFree.length > 0) {
            blocks = new ArrayList<>(blocks);
            for (long handle : alsoFree) {
                long size = h.blockSize(handle);
                blocks.add(new FreeBlock(h.address(handle), size, h.stamp, BlockHeader.NO_LIST, 0));
                allocatedBytes -= size;
                allocatedCount--;
            }
        }
        long len = FIXED + 8L * h.diskLists.plHeads.length + (long) PER_BLOCK * blocks.size() + 4;
        if (len > Integer.MAX_VALUE - 64) {
            throw new IllegalStateException("a snapshot of " + blocks.size() + " free blocks exceeds 2 GiB");
        }
        ByteBuffer b = ByteBuffer.allocate((int) len);
        b.putLong(MAGIC).putLong(len).putLong(h.tail).putLong(h.stamp).putLong(h.highWater).putLong(allocatedBytes)
                .putLong(h.requestedBytes).putLong(allocatedCount).putLong(h.coalesces).putInt(h.diskLists.plHeads.length)
                .putLong(blocks.size());
        for (long head : h.diskLists.plHeads) {
            b.putLong(head);
        }
        for (FreeBlock f : blocks) {
            b.putLong(f.addr / h.grain).putInt(Math.toIntExact(f.size / h.grain));
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.flip();
    }

    private static List<FreeBlock> ordered(Heap h) {
        if (h.method != StorageMethod.PFL) {
            return h.lists.all();
        }
        List<FreeBlock> out = new ArrayList<>();
        for (FreeBlock head : h.diskLists.pflHeads) {
            for (FreeBlock f = head; f != null; f = f.listNext) {
                out.add(f);
            }
        }
        return out;
    }

    static void read(Heap h, Heap.SnapshotRef ref) {
        String where = "snapshot at offset " + ref.offset() + " in " + h.dev.name();
        if (ref.length() < FIXED + 4 || ref.length() > Integer.MAX_VALUE - 64 || ref.offset() < h.start
                || ref.offset() + ref.length() > h.dev.size()) {
            throw new CorruptStoreException(where + ": length " + ref.length() + " does not fit the device", ref.offset());
        }
        ByteBuffer b = ByteBuffer.allocate((int) ref.length());
        h.dev.read(ref.offset(), b);
        decode(h, b.flip(), where);
    }

    /**
     * A new heap's state from log mode's snapshot in {@code bytes}, writing nothing: every extent
     * counted durable, stamps restarted a gap above the snapshot's (as after a crash), and the
     * writes an open owes left for {@link Heap#finishOpen()}.
     */
    static void open(Heap h, ByteBuffer bytes, String where) {
        Checkpoint cp = Checkpoint.read(h.dev, h.opt.heapOffset());
        if (cp != null) {
            h.checkpointSeq = cp.sequence + 1;
        }
        decode(h, bytes, where);
        h.stamp += HeapRecovery.STAMP_GAP;
        h.writtenCheckpointStamp = h.stamp;
        h.durableCheckpointStamp = h.stamp;
        h.markDurable();
        h.recoveryWritesPending = true;
        h.report = new HeapRecoveryReport("checkpoint", java.time.Duration.ZERO, 0, bytes.remaining(),
                h.lists.freeCount(), 0, 0, 0, null);
    }

    /** Restores the heap's state from a snapshot held in {@code b}; {@code where} names it in errors. */
    static void decode(Heap h, ByteBuffer b, String where) {
        long length = b.remaining();
        if (length < FIXED + 4) {
            throw new CorruptStoreException(where + ": " + length + " bytes, too short for a snapshot", -1);
        }
        b = b.slice();
        CRC32C crc = new CRC32C();
        crc.update(b.duplicate().limit(b.limit() - 4));
        int found = b.getInt(b.limit() - 4);
        if (b.getLong(0) != MAGIC || b.getLong(8) != length || found != (int) crc.getValue()) {
            throw new CorruptStoreException(where + ": expected magic HTODSNAP, length " + length + " and CRC32C "
                    + Integer.toHexString((int) crc.getValue()) + ", found magic " + Long.toHexString(b.getLong(0))
                    + ", length " + b.getLong(8) + ", CRC32C " + Integer.toHexString(found), -1);
        }
        b.position(16);
        h.tail = b.getLong();
        h.stamp = b.getLong();
        h.markDurable();
        h.highWater = b.getLong();
        h.allocatedBytes = b.getLong();
        h.requestedBytes = b.getLong();
        h.allocatedCount = b.getLong();
        h.coalesces = b.getLong();
        int lists = b.getInt();
        long count = b.getLong();
        if (h.tail < h.start || h.tail > h.end) {
            throw new CorruptStoreException(where + ": tail " + h.tail + " outside the heap [" + h.start + ", " + h.end
                    + "]", -1);
        }
        if (lists != h.diskLists.plHeads.length || count < 0 || FIXED + 8L * lists + PER_BLOCK * count + 4 != length) {
            throw new CorruptStoreException(where + ": expected " + h.diskLists.plHeads.length + " list heads and a length matching "
                    + count + " blocks, found " + lists + " heads in " + length + " bytes", -1);
        }
        for (int i = 0; i < lists; i++) {
            h.diskLists.plHeads[i] = b.getLong();
        }
        FreeBlock[] listTails = new FreeBlock[h.diskLists.pflHeads.length];
        long[] starts = new long[(int) count];
        long[] ends = new long[(int) count];
        for (int i = 0; i < count; i++) {
            long addr = b.getLong() * h.grain;
            long size = (long) b.getInt() * h.grain;
            if (addr < h.start || size <= 0 || addr > h.tail - size) {
                throw new CorruptStoreException(where + ": free block " + i + " at " + addr + " of " + size
                        + " bytes lies outside the blocks [" + h.start + ", " + h.tail + ")", -1);
            }
            starts[i] = addr;
            ends[i] = addr + size;
            FreeBlock f = new FreeBlock(addr, size, h.stamp, BlockHeader.NO_LIST, 0);
            if (h.method == StorageMethod.PL) {
                f.listId = -1;
            } else if (h.method == StorageMethod.PFL) {
                f.listId = h.lists.listOf(size);
                appendToList(h, listTails, f);
            }
            h.lists.add(f);
        }
        refuseOverlaps(starts, ends, where);
    }

    /**
     * Refuses free blocks that overlap: two would hand out the same bytes twice. Checked with the
     * starts and the ends sorted apart, without pairing them: the blocks are disjoint exactly when
     * each start but the first lies at or past the end ranked before it (at any address, the
     * blocks begun there less those ended there are then at most one).
     */
    private static void refuseOverlaps(long[] starts, long[] ends, String where) {
        Arrays.sort(starts);
        Arrays.sort(ends);
        for (int i = 1; i < starts.length; i++) {
            if (starts[i] < ends[i - 1]) {
                throw new CorruptStoreException(where + ": free blocks overlap: one starts at " + starts[i]
                        + ", before one of them ends at " + ends[i - 1], -1);
            }
        }
    }

    private static void appendToList(Heap h, FreeBlock[] tails, FreeBlock f) {
        FreeBlock last = tails[f.listId];
        if (last == null) {
            h.diskLists.pflHeads[f.listId] = f;
        } else {
            last.listNext = f;
            last.next = f.addr;
            f.listPrev = last;
        }
        tails[f.listId] = f;
    }
}
