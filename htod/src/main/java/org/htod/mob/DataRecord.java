package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.CorruptStoreException;

/**
 * Changes to keys, as the log records them: one record holds one operation, or every operation
 * of a {@code WriteBatch}, which the record's checksum makes all or none. Payload of a log record
 * of type {@link #TYPE}; numbers big-endian:
 *
 * <pre>
 * 4   count n
 * n × operation:
 *   1  kind        1 put, 2 remove
 *   8  tableId     the map's table
 *   4  keyLength k
 *   k  key
 *   put only:
 *   8  version     the version the entry gets (decided when the change was logged)
 *   8  expiry      epoch milliseconds, 0 for never
 *   4  valueLength v
 *   v  value
 * </pre>
 *
 * Every operation is a blind write with its outcome decided: the value a key gets, or its
 * removal. Replaying records in order therefore leaves each key as the last one says, however
 * many of them had been installed before, and replaying twice equals replaying once.
 */
final class DataRecord {
    static final int TYPE = 1;
    static final byte PUT = 1;
    static final byte REMOVE = 2;

    /** One operation: {@code value} null for a removal. */
    record Op(long tableId, byte[] key, byte[] value, long version, long expiry) {
        boolean isRemove() {
            return value == null;
        }

        int size() {
            return 1 + 8 + 4 + key.length + (value == null ? 0 : 8 + 8 + 4 + value.length);
        }
    }

    private DataRecord() {}

    static int size(List<Op> ops) {
        int n = 4;
        for (Op op : ops) {
            n += op.size();
        }
        return n;
    }

    static ByteBuffer encode(List<Op> ops) {
        ByteBuffer b = ByteBuffer.allocate(size(ops));
        b.putInt(ops.size());
        for (Op op : ops) {
            b.put(op.isRemove() ? REMOVE : PUT).putLong(op.tableId()).putInt(op.key().length).put(op.key());
            if (!op.isRemove()) {
                b.putLong(op.version()).putLong(op.expiry()).putInt(op.value().length).put(op.value());
            }
        }
        return b.flip();
    }

    static List<Op> decode(ByteBuffer b, long lsn, String device) {
        try {
            int n = b.getInt();
            if (n < 0 || n > b.remaining()) {
                throw bad(lsn, device, "a count of " + n);
            }
            List<Op> ops = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                byte kind = b.get();
                long tableId = b.getLong();
                byte[] key = bytes(b, lsn, device);
                if (kind == REMOVE) {
                    ops.add(new Op(tableId, key, null, 0, 0));
                } else if (kind == PUT) {
                    long version = b.getLong();
                    long expiry = b.getLong();
                    ops.add(new Op(tableId, key, bytes(b, lsn, device), version, expiry));
                } else {
                    throw bad(lsn, device, "an operation of kind " + kind);
                }
            }
            if (b.hasRemaining()) {
                throw bad(lsn, device, b.remaining() + " bytes after the last operation");
            }
            return ops;
        } catch (java.nio.BufferUnderflowException e) {
            throw bad(lsn, device, "fewer bytes than its lengths say");
        }
    }

    private static byte[] bytes(ByteBuffer b, long lsn, String device) {
        int n = b.getInt();
        if (n < 0 || n > b.remaining()) {
            throw bad(lsn, device, "a length of " + n + " with " + b.remaining() + " bytes left");
        }
        byte[] out = new byte[n];
        b.get(out);
        return out;
    }

    private static CorruptStoreException bad(long lsn, String device, String found) {
        return new CorruptStoreException("data record at log position " + lsn + " of " + device
                + ": its checksum matched, but it holds " + found, -1);
    }
}
