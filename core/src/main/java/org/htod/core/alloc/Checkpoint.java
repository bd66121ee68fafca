package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.htod.core.device.BlockDevice;

/**
 * The heap's checkpoint area: two 4096-byte copies at the start of the heap region, written
 * alternately, the valid one with the higher sequence wins. It holds the tail pointer, which may
 * be behind the real tail (recovery walks forward from it, paper Fig. 7), the stamp counter at the
 * time of writing (blocks past the tail with a higher creation stamp are real), and for PL/PFL
 * the disk list heads (DLH).
 *
 * <pre>
 *  0   8  magic      "HTODCKPT"
 *  8   8  sequence
 * 16   8  tail       absolute offset
 * 24   8  stamp      every creation stamp issued before this checkpoint is &lt;= stamp
 * 32   4  lists      number of list heads that follow (0 for TS)
 * 36   8n heads      absolute offset of the first block of each disk list, 0 for empty
 * 36+8n 4 crc32c     of all preceding bytes
 * </pre>
 */
final class Checkpoint {
    static final int COPY_SIZE = 4096;
    static final int AREA_SIZE = 2 * COPY_SIZE;
    static final long MAGIC = 0x48544F44434B5054L; // "HTODCKPT"
    private static final int HEADS_OFFSET = 36;

    final long sequence;
    final long tail;
    final long stamp;
    final long[] heads;

    Checkpoint(long sequence, long tail, long stamp, long[] heads) {
        this.sequence = sequence;
        this.tail = tail;
        this.stamp = stamp;
        this.heads = heads;
    }

    static int maxLists() {
        return (COPY_SIZE - HEADS_OFFSET - 4) / 8;
    }

    void write(BlockDevice dev, long areaOffset) {
        ByteBuffer b = ByteBuffer.allocate(COPY_SIZE);
        b.putLong(MAGIC).putLong(sequence).putLong(tail).putLong(stamp).putInt(heads.length);
        for (long h : heads) {
            b.putLong(h);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        b.clear();
        dev.write(areaOffset + (sequence & 1) * COPY_SIZE, b);
    }

    /**
     * Whether anything was ever written to the area at {@code areaOffset}: false only when it is
     * absent or all zeros, as a creation interrupted before the heap leaves it. A damaged
     * checkpoint counts as written, so that opening reports it instead of formatting over data.
     */
    static boolean areaWritten(BlockDevice dev, long areaOffset) {
        if (dev.size() < areaOffset + AREA_SIZE) {
            return false;
        }
        ByteBuffer area = ByteBuffer.allocate(AREA_SIZE);
        dev.read(areaOffset, area);
        for (int i = 0; i < area.capacity(); i++) {
            if (area.get(i) != 0) {
                return true;
            }
        }
        return false;
    }

    /** The valid copy with the higher sequence, or null if neither is valid. */
    static Checkpoint read(BlockDevice dev, long areaOffset) {
        Checkpoint best = null;
        for (int copy = 0; copy < 2; copy++) {
            Checkpoint c = readCopy(dev, areaOffset + (long) copy * COPY_SIZE);
            if (c != null && (best == null || c.sequence > best.sequence)) {
                best = c;
            }
        }
        return best;
    }

    private static Checkpoint readCopy(BlockDevice dev, long at) {
        ByteBuffer b = ByteBuffer.allocate(COPY_SIZE);
        dev.read(at, b);
        b.flip();
        if (b.getLong(0) != MAGIC) {
            return null;
        }
        int n = b.getInt(32);
        if (n < 0 || n > maxLists()) {
            return null;
        }
        int end = HEADS_OFFSET + 8 * n;
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, end);
        if (b.getInt(end) != (int) crc.getValue()) {
            return null;
        }
        long[] heads = new long[n];
        for (int i = 0; i < n; i++) {
            heads[i] = b.getLong(HEADS_OFFSET + 8 * i);
        }
        return new Checkpoint(b.getLong(8), b.getLong(16), b.getLong(24), heads);
    }
}
