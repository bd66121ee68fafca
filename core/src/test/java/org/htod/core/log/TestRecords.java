package org.htod.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.device.BlockDevice;

/**
 * What the log's tests share: records whose payload names its id and whose every byte follows
 * from it, so that one read back is checked whole; a log opened as a store opens it; and the
 * records of a log read back in order.
 */
final class TestRecords {
    private TestRecords() {}

    /** A payload of {@code size} bytes (at least 8): {@code id}, then bytes that follow from it. */
    static ByteBuffer payload(long id, int size) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(8, size));
        b.putLong(0, id);
        for (int i = 8; i < b.capacity(); i++) {
            b.put(i, (byte) (id * 31 + i));
        }
        return b;
    }

    /** The id of record {@code r}, once every byte of its payload is checked against it. */
    static long checkedId(Records.Record r) {
        long id = r.payload().getLong(0);
        for (int i = 8; i < r.payload().remaining(); i++) {
            assertEquals((byte) (id * 31 + i), r.payload().get(i), "record " + id + " byte " + i);
        }
        return id;
    }

    /** A log as a store's opening makes it: constructed, then prepared before its first append. */
    static Log open(BlockDevice dev, long regionOffset, long regionBytes, long start, long end, long epoch) {
        Log log = new Log(dev, regionOffset, regionBytes, start, end, epoch);
        log.prepare();
        return log;
    }

    /** The ids of the records read back from {@code start}, each checked whole; throws what the reader throws. */
    static List<Long> readAll(BlockDevice dev, long regionOffset, long regionBytes, long start) {
        LogReader reader = new LogReader(dev, regionOffset, regionBytes, start, 0);
        List<Long> ids = new ArrayList<>();
        for (Records.Record r = reader.next(); r != null; r = reader.next()) {
            ids.add(checkedId(r));
        }
        return ids;
    }
}
