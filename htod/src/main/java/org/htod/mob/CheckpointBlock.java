package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;
import org.htod.table.InstallRecord;

/**
 * A checkpoint of a logged store: the heap's state (its snapshot) and every table's state, as of
 * a position in the log after which the log's install records are redone. One heap block, named
 * by the superblock's snapshot fields. Numbers big-endian:
 *
 * <pre>
 *  0  8  magic            "HTODCKPB"
 *  8  8  length           bytes of this record, CRC included
 * 16  8  position         the log position of the checkpoint (the superblock's logCheckpoint)
 * 24  4  snapshotLength   s
 * 28  s  heap snapshot    the clean-shutdown snapshot format (see the heap section)
 * 28+s 4 tables           t
 *     52t table states    header 8, tableId 8, count 8, array 8, newArray 8, moved 8, loadPermille 4
 * end-4 4 crc32c          of everything before it
 * </pre>
 */
final class CheckpointBlock {
    static final long MAGIC = 0x48544F44434B5042L; // "HTODCKPB"

    record Contents(long position, ByteBuffer heapSnapshot, List<InstallRecord.TableState> tables) {}

    private CheckpointBlock() {}

    /** Bytes of the record of a heap snapshot of {@code snapshotBytes} and {@code tables} table states. */
    static int length(int snapshotBytes, int tables) {
        return 28 + snapshotBytes + 4 + 52 * tables + 4;
    }

    static ByteBuffer encode(long position, ByteBuffer snapshot, List<InstallRecord.TableState> tables) {
        int len = length(snapshot.remaining(), tables.size());
        ByteBuffer b = ByteBuffer.allocate(len);
        b.putLong(MAGIC).putLong(len).putLong(position).putInt(snapshot.remaining()).put(snapshot.duplicate());
        b.putInt(tables.size());
        for (InstallRecord.TableState t : tables) {
            b.putLong(t.header()).putLong(t.tableId()).putLong(t.count()).putLong(t.array()).putLong(t.newArray())
                    .putLong(t.moved()).putInt(t.loadPermille());
        }
        CRC32C c = new CRC32C();
        c.update(b.array(), 0, b.position());
        b.putInt((int) c.getValue());
        return b.flip();
    }

    static Contents decode(ByteBuffer b, long at, String device) {
        String where = "checkpoint at offset " + at + " of " + device;
        if (b.remaining() < 36) {
            throw new CorruptStoreException(where + ": expected a checkpoint record, found " + b.remaining() + " bytes", at);
        }
        b = b.slice();
        long len = b.getLong(8);
        if (b.getLong(0) != MAGIC || len < 36 || len > b.remaining()) {
            throw new CorruptStoreException(where + ": expected magic HTODCKPB and a length within " + b.remaining()
                    + " bytes, found 0x" + Long.toHexString(b.getLong(0)) + " and " + len, at);
        }
        b.limit((int) len);
        CRC32C c = new CRC32C();
        c.update(b.duplicate().limit((int) len - 4));
        int found = b.getInt((int) len - 4);
        if (found != (int) c.getValue()) {
            throw new CorruptStoreException(where + ": expected CRC32C 0x" + Integer.toHexString((int) c.getValue())
                    + ", found 0x" + Integer.toHexString(found), at);
        }
        try {
            b.position(16);
            long position = b.getLong();
            int s = b.getInt();
            if (s < 0 || s > b.remaining()) {
                throw new CorruptStoreException(where + ": a heap snapshot of " + s + " bytes in a record of " + len, at);
            }
            ByteBuffer snapshot = b.slice(b.position(), s);
            b.position(b.position() + s);
            int t = b.getInt();
            if (t < 0 || 52L * t != b.remaining() - 4) {
                throw new CorruptStoreException(where + ": " + t + " table states in " + (b.remaining() - 4) + " bytes", at);
            }
            List<InstallRecord.TableState> tables = new ArrayList<>(t);
            for (int i = 0; i < t; i++) {
                tables.add(new InstallRecord.TableState(b.getLong(), b.getLong(), b.getLong(), b.getLong(), b.getLong(),
                        b.getLong(), b.getInt()));
            }
            return new Contents(position, snapshot, tables);
        } catch (java.nio.BufferUnderflowException e) {
            throw new CorruptStoreException(where + ": shorter than its fields say", at);
        }
    }
}
