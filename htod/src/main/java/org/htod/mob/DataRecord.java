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
 *   1  kind        1 put, 2 remove, 3 placed put
 *   8  tableId     the map's table
 *   4  keyLength k
 *   k  key
 *   put and placed put:
 *   8  version     the version the entry gets (decided when the change was logged)
 *   8  expiry      epoch milliseconds, 0 for never
 *   4  valueLength v
 *   put only:
 *   v  value
 *   placed put only:
 *   8  block       handle of the heap block holding the key's whole entry, value included
 *   4  headCrc     the entry's head CRC (over its fields, its value's CRC among them, and its key)
 * </pre>
 *
 * Every operation is a blind write with its outcome decided: the value a key gets, or its
 * removal. Replaying records in order therefore leaves each key as the last one says, however
 * many of them had been installed before, and replaying twice equals replaying once.
 *
 * <p>A placed put's value is not in the log: its writer wrote the entry into a heap block of its
 * own before logging the record, and the commit that makes the record durable syncs the device,
 * so the block is durable with it (see {@code WriteLayer}'s placed values).
 *
 * <p>A <em>relog unit</em> holds changes that must be replayed together but exceed one record:
 * those a failed log write dropped, logged again after the heal (see {@code
 * WriteLayer.relogDropped}). Its records, of type {@link #PART_TYPE}, lie one after the other in
 * the log, each a data record's payload behind its place in the unit:
 *
 * <pre>
 * 4   index i     0 for the first part
 * 4   count c     the unit's parts, at least 2; i &lt; c
 * ... the operations, as a type 1 payload (count n, then n operations)
 * </pre>
 *
 * Replay applies a unit's operations only once it has read all of its parts, in order; a unit
 * that the log's end or any other record cuts short is left out whole.
 */
final class DataRecord {
    static final int TYPE = 1;
    /** A part of a relog unit: see the class comment. */
    static final int PART_TYPE = 3;
    /** Bytes a part adds before its operations: its index and the unit's count of parts. */
    static final int PART_HEAD = 8;
    static final byte PUT = 1;
    static final byte REMOVE = 2;
    static final byte PLACED = 3;

    /** Where a placed put's entry lies: its block, the entry's head CRC, and its value's length. */
    record Placed(long block, int headCrc, int valueLength) {}

    /**
     * One operation: {@code value} and {@code placed} null for a removal. A placed put has {@code
     * placed}, and its {@code value} when its writer logs it, null when read back from the log.
     */
    record Op(long tableId, byte[] key, byte[] value, long version, long expiry, Placed placed) {
        Op(long tableId, byte[] key, byte[] value, long version, long expiry) {
            this(tableId, key, value, version, expiry, null);
        }

        boolean isRemove() {
            return value == null && placed == null;
        }

        int size() {
            int head = 1 + 8 + 4 + key.length;
            if (placed != null) {
                return head + 8 + 8 + 4 + 8 + 4;
            }
            return head + (value == null ? 0 : 8 + 8 + 4 + value.length);
        }
    }

    /** One part of a relog unit, read back: part {@code index} of {@code count}. */
    record Part(int index, int count, List<Op> ops) {}

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
            byte kind = op.placed() != null ? PLACED : op.isRemove() ? REMOVE : PUT;
            b.put(kind).putLong(op.tableId()).putInt(op.key().length).put(op.key());
            if (kind == PUT) {
                b.putLong(op.version()).putLong(op.expiry()).putInt(op.value().length).put(op.value());
            } else if (kind == PLACED) {
                Placed p = op.placed();
                b.putLong(op.version()).putLong(op.expiry()).putInt(p.valueLength()).putLong(p.block())
                        .putInt(p.headCrc());
            }
        }
        return b.flip();
    }

    /**
     * {@code ops} cut, in their order, into the fewest runs that each fit a part of at most {@code
     * maxPayload} bytes (greedy: a run ends where the next operation would not fit). Every
     * operation fits a part alone: a value takes at most 64 bytes less than a record's payload
     * beyond its key ({@code HtodStore.maxValueBytes}), so an operation at most 31 less.
     */
    static List<List<Op>> split(List<Op> ops, long maxPayload) {
        List<List<Op>> runs = new ArrayList<>();
        List<Op> run = new ArrayList<>();
        long bytes = PART_HEAD + 4;
        for (Op op : ops) {
            if (!run.isEmpty() && bytes + op.size() > maxPayload) {
                runs.add(run);
                run = new ArrayList<>();
                bytes = PART_HEAD + 4;
            }
            run.add(op);
            bytes += op.size();
        }
        if (!run.isEmpty()) {
            runs.add(run);
        }
        return runs;
    }

    /** The payload of part {@code index} of a unit of {@code count} parts, holding {@code ops}. */
    static ByteBuffer encodePart(int index, int count, List<Op> ops) {
        ByteBuffer body = encode(ops);
        ByteBuffer b = ByteBuffer.allocate(PART_HEAD + body.remaining());
        return b.putInt(index).putInt(count).put(body).flip();
    }

    static Part decodePart(ByteBuffer b, long lsn, String device) {
        if (b.remaining() < PART_HEAD) {
            throw bad(lsn, device, "a part of a relog unit of " + b.remaining() + " bytes");
        }
        int index = b.getInt();
        int count = b.getInt();
        if (count < 2 || index < 0 || index >= count) {
            throw bad(lsn, device, "part " + index + " of a relog unit of " + count + " parts");
        }
        return new Part(index, count, decode(b, lsn, device));
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
                } else if (kind == PLACED) {
                    long version = b.getLong();
                    long expiry = b.getLong();
                    int valueLength = b.getInt();
                    long block = b.getLong();
                    int headCrc = b.getInt();
                    if (valueLength < 0 || block == 0) {
                        throw bad(lsn, device, "a placed put of value length " + valueLength + " in block 0x"
                                + Long.toHexString(block));
                    }
                    ops.add(new Op(tableId, key, null, version, expiry, new Placed(block, headCrc, valueLength)));
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
