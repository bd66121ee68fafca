package org.htod.table;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.CorruptStoreException;

/**
 * What an install changed in the heap and the tables, as the log records it before any of it is
 * written in place (redo). Payload of a log record of type {@link #TYPE}; numbers big-endian:
 *
 * <pre>
 * 4        allocs      count a
 * 8a       handles of the blocks allocated (their contents were synced before this record)
 * 4        frees       count f
 * 8f       handles of the blocks freed
 * 4        links       count l
 * 28l      each: block handle 8, payload offset 4, value 8, salt 8 (see Links)
 * 4        tables      count t
 * 52t      each: header handle 8, tableId 8, entry count 8, array 8, newArray 8, moved 8, loadPermille 4
 * </pre>
 *
 * Table states are absolute (the state after this install), so that replaying them in order
 * leaves each table as the last one says. A link into a block that a later record frees is not
 * replayed: the block may have been reused.
 */
public final class InstallRecord {
    /** Log record type of an install. */
    public static final int TYPE = 2;
    static final int LINK_BYTES = 28;
    static final int TABLE_BYTES = 52;

    /** One link write: {@code value} (with its check salted by {@code salt}) at {@code offset} of {@code block}'s payload. */
    public record LinkWrite(long block, int offset, long value, long salt) {}

    /** A table's state after the install. */
    public record TableState(long header, long tableId, long count, long array, long newArray, long moved,
            int loadPermille) {}

    final long[] allocs;
    final long[] frees;
    final List<LinkWrite> links;
    final List<TableState> tables;

    InstallRecord(long[] allocs, long[] frees, List<LinkWrite> links, List<TableState> tables) {
        this.allocs = allocs;
        this.frees = frees;
        this.links = links;
        this.tables = tables;
    }

    public long[] allocs() {
        return allocs;
    }

    public long[] frees() {
        return frees;
    }

    public List<LinkWrite> links() {
        return links;
    }

    public List<TableState> tables() {
        return tables;
    }

    public boolean isEmpty() {
        return allocs.length == 0 && frees.length == 0 && links.isEmpty() && tables.isEmpty();
    }

    int size() {
        return 16 + 8 * allocs.length + 8 * frees.length + LINK_BYTES * links.size() + TABLE_BYTES * tables.size();
    }

    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(size());
        b.putInt(allocs.length);
        for (long a : allocs) {
            b.putLong(a);
        }
        b.putInt(frees.length);
        for (long f : frees) {
            b.putLong(f);
        }
        b.putInt(links.size());
        for (LinkWrite l : links) {
            b.putLong(l.block()).putInt(l.offset()).putLong(l.value()).putLong(l.salt());
        }
        b.putInt(tables.size());
        for (TableState t : tables) {
            b.putLong(t.header()).putLong(t.tableId()).putLong(t.count()).putLong(t.array()).putLong(t.newArray())
                    .putLong(t.moved()).putInt(t.loadPermille());
        }
        return b.flip();
    }

    /** Decodes an install record of the log at position {@code lsn}; a malformed one is damage. */
    public static InstallRecord decode(ByteBuffer b, long lsn, String device) {
        try {
            long[] allocs = longs(b, lsn, device);
            long[] frees = longs(b, lsn, device);
            int nl = count(b, LINK_BYTES, lsn, device);
            List<LinkWrite> links = new ArrayList<>(nl);
            for (int i = 0; i < nl; i++) {
                links.add(new LinkWrite(b.getLong(), b.getInt(), b.getLong(), b.getLong()));
            }
            int nt = count(b, TABLE_BYTES, lsn, device);
            List<TableState> tables = new ArrayList<>(nt);
            for (int i = 0; i < nt; i++) {
                tables.add(new TableState(b.getLong(), b.getLong(), b.getLong(), b.getLong(), b.getLong(), b.getLong(),
                        b.getInt()));
            }
            if (b.hasRemaining()) {
                throw bad(lsn, device, b.remaining() + " bytes after the last table");
            }
            return new InstallRecord(allocs, frees, links, tables);
        } catch (java.nio.BufferUnderflowException e) {
            throw bad(lsn, device, "a record shorter than its counts say");
        }
    }

    private static long[] longs(ByteBuffer b, long lsn, String device) {
        int n = count(b, 8, lsn, device);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = b.getLong();
        }
        return out;
    }

    private static int count(ByteBuffer b, int each, long lsn, String device) {
        int n = b.getInt();
        if (n < 0 || (long) n * each > b.remaining()) {
            throw bad(lsn, device, "a count of " + n + " items of " + each + " bytes in " + b.remaining() + " bytes");
        }
        return n;
    }

    private static CorruptStoreException bad(long lsn, String device, String found) {
        return new CorruptStoreException("install record at log position " + lsn + " of " + device
                + ": its checksum matched, but it holds " + found, -1);
    }
}
