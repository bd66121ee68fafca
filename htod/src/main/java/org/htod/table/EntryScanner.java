package org.htod.table;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.device.BlockDevice;

/**
 * Reads every entry it can out of a heap without following any link: what salvage does with a
 * store too damaged to open or to walk. It steps through the heap a block at a time where block
 * headers are sound ({@code docs/FORMAT.md}, "Heap block header"), and a grain at a time where
 * they are not, and takes each allocated block whose entry head and value pass their CRC32C.
 * Writes nothing.
 *
 * <p>What it cannot tell: which of two allocated entries of one key is current (the caller keeps
 * the higher version), and entries freed but not yet overwritten (skipped: their blocks are
 * marked free). Changes that live only in a log-mode store's log are not in the heap.
 */
public final class EntryScanner {
    private EntryScanner() {}

    // Heap block header fields (core's BlockHeader; docs/FORMAT.md).
    private static final int HEADER = 48;
    private static final int SIZE_OFFSET = 8;
    private static final int CRC_OFFSET = 28;
    private static final int STATUS_OFFSET = 40;
    private static final int LENGTH_OFFSET = 44;
    private static final byte ALLOCATED = (byte) 0xA1;
    private static final byte FREE = (byte) 0xF4;
    private static final int WINDOW = 1 << 20;

    /** An entry found, whole and checked, in the block at {@code offset}. */
    public record Found(long offset, long tableId, long version, long expiry, byte[] key, byte[] value) {}

    /** What a scan read: bytes scanned, blocks whose header was sound, and bytes stepped over grain by grain. */
    public record Scan(long bytesScanned, long blocks, long entries, long unreadableBytes, long firstUnreadable) {}

    /**
     * Scans the heap of {@code dev} from {@code firstBlock} to {@code end} (both multiples of
     * {@code grain}), handing every sound entry to {@code found} and the bytes scanned so far to
     * {@code progress}.
     */
    public static Scan scan(BlockDevice dev, long firstBlock, long end, int grain, Consumer<Found> found,
            LongConsumer progress) {
        long pos = firstBlock;
        long blocks = 0;
        long entries = 0;
        long unreadable = 0;
        long firstBad = -1;
        ByteBuffer window = ByteBuffer.allocate(WINDOW);
        long windowAt = -1;
        int windowLen = 0;
        while (pos + HEADER <= end) {
            if (windowAt < 0 || pos < windowAt || pos + HEADER > windowAt + windowLen) {
                windowAt = pos;
                windowLen = (int) Math.min(WINDOW, end - pos);
                window.clear().limit(windowLen);
                try {
                    dev.read(pos, window);
                } catch (HtodException e) {
                    // An unreadable stretch: step over it a grain at a time.
                    windowAt = -1;
                    unreadable += grain;
                    firstBad = firstBad < 0 ? pos : firstBad;
                    pos += grain;
                    continue;
                }
            }
            int at = (int) (pos - windowAt);
            long size = headerSize(window, at, grain);
            if (size <= 0 || pos + size > end) {
                unreadable += grain;
                firstBad = firstBad < 0 ? pos : firstBad;
                pos += grain;
                progress.accept(pos - firstBlock);
                continue;
            }
            blocks++;
            if (window.get(at + STATUS_OFFSET) == ALLOCATED) {
                int length = window.getInt(at + LENGTH_OFFSET);
                if (length >= Entries.OVERHEAD && length <= size - HEADER) {
                    ByteBuffer payload;
                    if (pos + HEADER + length <= windowAt + windowLen) {
                        payload = window.duplicate().position(at + HEADER).limit(at + HEADER + length).slice();
                    } else {
                        payload = ByteBuffer.allocate(length);
                        try {
                            dev.read(pos + HEADER, payload);
                        } catch (HtodException e) {
                            payload = null;
                        }
                        if (payload != null) {
                            payload.flip();
                        }
                    }
                    Found f = payload == null ? null : entry(payload, pos);
                    if (f != null) {
                        entries++;
                        found.accept(f);
                    }
                }
            }
            pos += size;
            progress.accept(pos - firstBlock);
        }
        return new Scan(pos - firstBlock, blocks, entries, unreadable, firstBad);
    }

    /** The size of the block whose header is at {@code at}, or 0 if the header is not sound. */
    private static long headerSize(ByteBuffer b, int at, int grain) {
        byte status = b.get(at + STATUS_OFFSET);
        if (status != ALLOCATED && status != FREE) {
            return 0;
        }
        CRC32C c = new CRC32C();
        c.update(b.duplicate().position(at).limit(at + CRC_OFFSET));
        if ((int) c.getValue() != b.getInt(at + CRC_OFFSET)) {
            return 0;
        }
        long size = b.getLong(at + SIZE_OFFSET);
        return size >= grain && size % grain == 0 ? size : 0;
    }

    private static Found entry(ByteBuffer b, long offset) {
        Entries.Locator where = (h, expected, found) -> new CorruptStoreException("block at " + offset + ": expected "
                + expected + ", found " + found, offset);
        try {
            int keyLength = Entries.rawKeyLength(b);
            if (keyLength < 0 || Entries.KEY_OFFSET + (long) keyLength > b.limit()) {
                return null;
            }
            Entries.Head h = Entries.head(b, offset, where);
            if (Entries.KEY_OFFSET + (long) h.keyLength + h.valueLength > b.limit()) {
                return null;
            }
            Entries.checkValue(b, Entries.KEY_OFFSET + h.keyLength, h, offset, where);
            byte[] key = Entries.key(b, h);
            byte[] value = new byte[h.valueLength];
            b.get(Entries.KEY_OFFSET + h.keyLength, value);
            return new Found(offset, h.tableId, h.version, h.expiry, key, value);
        } catch (CorruptStoreException e) {
            return null;
        }
    }
}
