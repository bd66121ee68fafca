package org.htod.table;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import java.util.function.LongConsumer;
import org.htod.core.CorruptStoreException;
import org.htod.core.alloc.Heap;

/**
 * A bucket array: {@code bucketCount} 8-byte slots, each the handle of the first entry of a
 * chain (0 for an empty bucket), split over segments of at most {@link #MAX_SEGMENT_SLOTS} slots
 * so that no single block, and no buffer in memory, has to hold a large table's whole array. A
 * directory block names the segments.
 *
 * <p>Directory payload (immutable, written once by the allocation that creates it):
 *
 * <pre>
 *  0   8  magic         "HTODBDIR"
 *  8   8  bucketCount   a power of two, at least MIN_BUCKETS
 * 16   4  segmentShift  log2 of the slots per segment
 * 20   4  segmentCount  bucketCount >> segmentShift
 * 24  8s  segments      handle of each segment, in bucket order
 * 24+8s 4 crc32c        CRC32C of bytes 0 .. 24+8s-1
 * </pre>
 *
 * <p>Segment payload: {@code 1 << segmentShift} slots of 16 bytes, slot {@code i} at offset {@code
 * 16 i}: the handle of the chain's first entry (0 for none), its {@link Links#check} salted with
 * the bucket index, and 4 reserved bytes (0). Written whole when allocated, every slot holding 0
 * and its check, then updated in place one slot at a time (or a run of slots during a doubling).
 * A slot sits at a 16-byte aligned offset (payloads start 48 bytes into a block aligned to 64),
 * so a slot write never straddles a sector and a crash leaves a slot old or new, never torn; a
 * zeroed sector or a stray write fails the check, and is reported, instead of emptying buckets.
 */
final class BucketArray {
    static final long MAGIC = 0x48544f4442444952L; // "HTODBDIR"
    static final int MAGIC_OFFSET = 0;
    static final int BUCKET_COUNT_OFFSET = 8;
    static final int SEGMENT_SHIFT_OFFSET = 16;
    static final int SEGMENT_COUNT_OFFSET = 20;
    static final int SEGMENTS_OFFSET = 24;

    /** Bytes per slot: handle, check, reserved. */
    static final int SLOT_SIZE = 16;
    static final int MAX_SEGMENT_SHIFT = 16;
    static final int MAX_SEGMENT_SLOTS = 1 << MAX_SEGMENT_SHIFT;
    /** Smallest array; also the number of lock stripes, which must not exceed it. */
    static final int MIN_BUCKETS = 64;

    final long directory;
    final long bucketCount;
    final int shift;
    final long[] segments;
    /** The in-memory copies of the segments' slots, parallel to {@link #segments}; null when none are kept. */
    private final SlotCache.Segment[] copies;

    private BucketArray(long directory, long bucketCount, int shift, long[] segments, SlotCache.Segment[] copies) {
        this.directory = directory;
        this.bucketCount = bucketCount;
        this.shift = shift;
        this.segments = segments;
        this.copies = copies;
    }

    /**
     * Allocates a zeroed array of {@code buckets} slots: its segments, then its directory; with
     * {@code slots}, its slots are held in memory from the start (all empty).
     */
    static BucketArray allocate(Heap heap, long buckets, SlotCache slots) {
        if (buckets < MIN_BUCKETS || Long.bitCount(buckets) != 1) {
            throw new IllegalArgumentException("bucket count must be a power of two of at least " + MIN_BUCKETS
                    + ", found " + buckets);
        }
        int shift = Math.min(MAX_SEGMENT_SHIFT, Long.numberOfTrailingZeros(buckets));
        int count = Math.toIntExact(buckets >>> shift);
        long[] segs = new long[count];
        try {
            for (int i = 0; i < count; i++) {
                segs[i] = heap.allocate(emptySegment((long) i << shift, 1 << shift));
            }
            ByteBuffer d = ByteBuffer.allocate(SEGMENTS_OFFSET + 8 * count + 4);
            d.putLong(MAGIC_OFFSET, MAGIC);
            d.putLong(BUCKET_COUNT_OFFSET, buckets);
            d.putInt(SEGMENT_SHIFT_OFFSET, shift);
            d.putInt(SEGMENT_COUNT_OFFSET, count);
            for (int i = 0; i < count; i++) {
                d.putLong(SEGMENTS_OFFSET + 8 * i, segs[i]);
            }
            d.putInt(SEGMENTS_OFFSET + 8 * count, crc(d, SEGMENTS_OFFSET + 8 * count));
            long dir = heap.allocate(d);
            SlotCache.Segment[] copies = null;
            if (slots != null) {
                copies = new SlotCache.Segment[count];
                for (int i = 0; i < count; i++) {
                    copies[i] = slots.fresh(segs[i], 1 << shift);
                }
            }
            return new BucketArray(dir, buckets, shift, segs, copies);
        } catch (RuntimeException e) {
            // Give back what was allocated (a full heap is worth recovering from); if the heap
            // refuses, as after a device error, the blocks are leaks that recovery frees.
            try {
                for (long s : segs) {
                    if (s != 0) {
                        heap.free(s);
                    }
                }
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** A segment's payload whose slots, for buckets {@code first ..}, are all empty. */
    static ByteBuffer emptySegment(long first, int slots) {
        ByteBuffer b = ByteBuffer.allocate(slots * SLOT_SIZE);
        for (int i = 0; i < slots; i++) {
            b.putLong(i * SLOT_SIZE, 0).putInt(i * SLOT_SIZE + 8, Links.check(0, first + i));
        }
        return b;
    }

    /** Reads the directory block {@code dir}; with {@code slots}, its slots are held in memory once read. */
    static BucketArray load(Heap heap, long dir, SlotCache slots) {
        ByteBuffer d = heap.read(dir);
        long at = heap.address(dir);
        if (d.remaining() < SEGMENTS_OFFSET + 4 || d.getLong(MAGIC_OFFSET) != MAGIC) {
            throw new CorruptStoreException("expected a bucket directory (magic HTODBDIR) in the block at offset " + at
                    + " of " + heap.device().name() + ", found " + d.remaining() + " bytes starting 0x"
                    + (d.remaining() >= 8 ? Long.toHexString(d.getLong(0)) : "(short)"), at);
        }
        long buckets = d.getLong(BUCKET_COUNT_OFFSET);
        int shift = d.getInt(SEGMENT_SHIFT_OFFSET);
        int count = d.getInt(SEGMENT_COUNT_OFFSET);
        if (buckets < MIN_BUCKETS || Long.bitCount(buckets) != 1 || shift < 0 || shift > MAX_SEGMENT_SHIFT
                || count < 1 || (long) count << shift != buckets || d.remaining() < SEGMENTS_OFFSET + 8L * count + 4) {
            throw new CorruptStoreException("bucket directory at offset " + at + " of " + heap.device().name()
                    + ": expected a power-of-two bucket count split in whole segments, found " + buckets + " buckets, "
                    + count + " segments of 2^" + shift, at);
        }
        int end = SEGMENTS_OFFSET + 8 * count;
        int stored = d.getInt(end);
        int actual = crc(d, end);
        if (stored != actual) {
            throw new CorruptStoreException("bucket directory at offset " + at + " of " + heap.device().name()
                    + ": expected CRC32C 0x" + Integer.toHexString(actual) + ", found 0x" + Integer.toHexString(stored), at);
        }
        long[] segs = new long[count];
        for (int i = 0; i < count; i++) {
            segs[i] = d.getLong(SEGMENTS_OFFSET + 8 * i);
        }
        SlotCache.Segment[] copies = null;
        if (slots != null) {
            copies = new SlotCache.Segment[count];
            for (int i = 0; i < count; i++) {
                copies[i] = slots.of(segs[i]);
            }
        }
        return new BucketArray(dir, buckets, shift, segs, copies);
    }

    private static int crc(ByteBuffer d, int end) {
        CRC32C c = new CRC32C();
        ByteBuffer x = d.duplicate();
        x.position(0).limit(end);
        c.update(x);
        return (int) c.getValue();
    }

    long mask() {
        return bucketCount - 1;
    }

    /** The segment block that holds slot {@code bucket}. */
    long segment(long bucket) {
        return segments[(int) (bucket >>> shift)];
    }

    /** The payload offset of slot {@code bucket} in its segment. */
    long offsetIn(long bucket) {
        return (bucket & ((1L << shift) - 1)) * SLOT_SIZE;
    }

    /**
     * The handle in slot {@code bucket}, its check verified: from memory when the segment's slots
     * are held (the first use of a segment reads it whole, every slot checked), else one read of
     * 12 bytes.
     */
    long get(Heap heap, long bucket) {
        if (copies != null) {
            int seg = (int) (bucket >>> shift);
            int i = (int) (bucket & ((1L << shift) - 1));
            SlotCache.Segment c = copies[seg];
            long v = c.get(i);
            if (v >= 0) {
                return v;
            }
            long first = (long) seg << shift;
            long[] all = c.load(1 << shift, () -> getRun(heap, first, 1 << shift));
            if (all != null) {
                return all[i];
            }
        }
        return getRun(heap, bucket, 1)[0];
    }

    /** Writes slot {@code bucket}, handle and check: one aligned 12-byte write (and the copy in memory). */
    void set(Heap heap, long bucket, long handle) {
        Runnable write = () -> heap.writeAt(segment(bucket), offsetIn(bucket), Links.encode(handle, bucket));
        if (copies == null) {
            write.run();
        } else {
            copies[(int) (bucket >>> shift)].write((int) (bucket & ((1L << shift) - 1)), new long[] {handle}, write);
        }
    }

    /** Reads {@code count} slots from {@code first} on, which must lie in one segment, checking each. */
    long[] getRun(Heap heap, long first, int count) {
        ByteBuffer b = ByteBuffer.allocate(SLOT_SIZE * count - (SLOT_SIZE - Links.SIZE));
        heap.readAt(segment(first), offsetIn(first), b);
        long[] out = new long[count];
        for (int i = 0; i < count; i++) {
            long v = b.getLong(i * SLOT_SIZE);
            int stored = b.getInt(i * SLOT_SIZE + 8);
            int actual = Links.check(v, first + i);
            if (stored != actual) {
                long at = heap.address(segment(first)) + HashtableOnDisk.BLOCK_HEADER + offsetIn(first + i);
                throw new CorruptStoreException("bucket slot " + (first + i) + " at offset " + at + " of "
                        + heap.device().name() + ": expected a check of 0x" + Integer.toHexString(actual) + " for handle 0x"
                        + Long.toHexString(v) + ", found 0x" + Integer.toHexString(stored), at);
            }
            out[i] = v;
        }
        return out;
    }

    /** Writes {@code values} to the slots from {@code first} on, which must lie in one segment: one write. */
    void setRun(Heap heap, long first, long[] values) {
        ByteBuffer b = encodeRun(first, values);
        Runnable write = () -> heap.writeAt(segment(first), offsetIn(first), b);
        if (copies == null) {
            write.run();
        } else {
            copies[(int) (first >>> shift)].write((int) (first & ((1L << shift) - 1)), values, write);
        }
    }

    /**
     * The bytes of slots {@code first ..} holding {@code values}: each slot its handle, its check
     * salted by its bucket, and zero padding to {@value #SLOT_SIZE} bytes.
     */
    static ByteBuffer encodeRun(long first, long[] values) {
        ByteBuffer b = ByteBuffer.allocate(SLOT_SIZE * values.length);
        for (int i = 0; i < values.length; i++) {
            b.putLong(i * SLOT_SIZE, values[i]).putInt(i * SLOT_SIZE + 8, Links.check(values[i], first + i));
        }
        return b;
    }

    /** Slots per segment: runs of slots passed to {@link #getRun} and {@link #setRun} stay within this. */
    int segmentSlots() {
        return 1 << shift;
    }

    /** Every block of the array: the directory and the segments. */
    void forEachBlock(LongConsumer c) {
        c.accept(directory);
        for (long s : segments) {
            c.accept(s);
        }
    }

    /** Frees the array's blocks, its slots in memory first. */
    void free(Heap heap, SlotCache slots) {
        for (long s : segments) {
            if (slots != null) {
                slots.drop(s);
            }
            heap.free(s);
        }
        heap.free(directory);
    }
}
