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
 *
 * <p>A commit whose record exceeds the log's largest payload goes out as an <em>install unit</em>
 * ({@link #split}): records of type {@link #PART_TYPE}, each an index, a count and an install
 * record of a slice of the commit's lists, which replay takes whole or not at all ({@link
 * #merge}). The commit writes nothing in place before its last part is durable, so a unit cut
 * short by a crash or a failed write is, to replay, a record that was never written. A doubling
 * batch over one long chain needs one (its links must be redone together, or a chain is left
 * half unzipped), and so may a commit that records what failed ones left waiting.
 */
public final class InstallRecord {
    /** Log record type of an install. */
    public static final int TYPE = 2;
    /** Log record type of a part of an install unit (see {@link #split}). */
    public static final int PART_TYPE = 4;
    /** Bytes of a part's head: its index and the unit's count of parts. */
    static final int PART_HEAD = 8;
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

    /**
     * This record cut, in order, into the fewest parts whose payloads (head included) take at most
     * {@code maxPayload} bytes each: its allocations, then its frees, links and table states, each
     * part an install record of its slice. Merged in order ({@link #merge}) they are this record
     * again, so replay redoes a whole unit as it would this record: its allocations before its
     * frees, its links as of one record. Every item fits a part alone: the smallest largest
     * payload is thousands of bytes.
     */
    List<InstallRecord> split(long maxPayload) {
        long room = maxPayload - PART_HEAD - 16;
        if (room < TABLE_BYTES) {
            throw new IllegalArgumentException("parts of at most " + maxPayload + " bytes cannot hold an install record");
        }
        List<InstallRecord> parts = new ArrayList<>();
        Slicer cut = new Slicer(room, parts);
        for (long a : allocs) {
            cut.add(8, p -> p.allocs.add(a));
        }
        for (long f : frees) {
            cut.add(8, p -> p.frees.add(f));
        }
        for (LinkWrite l : links) {
            cut.add(LINK_BYTES, p -> p.links.add(l));
        }
        for (TableState t : tables) {
            cut.add(TABLE_BYTES, p -> p.tables.add(t));
        }
        cut.end();
        return parts;
    }

    /** The lists of a part being filled by {@link #split}. */
    private static final class Lists {
        final List<Long> allocs = new ArrayList<>();
        final List<Long> frees = new ArrayList<>();
        final List<LinkWrite> links = new ArrayList<>();
        final List<TableState> tables = new ArrayList<>();

        InstallRecord record() {
            return new InstallRecord(toArray(allocs), toArray(frees), links, tables);
        }
    }

    /** Fills parts of at most {@code room} bytes of items, in order. */
    private static final class Slicer {
        private final long room;
        private final List<InstallRecord> out;
        private Lists part = new Lists();
        private long bytes;

        Slicer(long room, List<InstallRecord> out) {
            this.room = room;
            this.out = out;
        }

        void add(int size, java.util.function.Consumer<Lists> item) {
            if (bytes + size > room) {
                end();
            }
            item.accept(part);
            bytes += size;
        }

        void end() {
            if (bytes > 0) {
                out.add(part.record());
                part = new Lists();
                bytes = 0;
            }
        }
    }

    /** The payload of part {@code index} of a unit of {@code count} parts: the head, then the part as an install record. */
    ByteBuffer encodePart(int index, int count) {
        ByteBuffer body = encode();
        ByteBuffer b = ByteBuffer.allocate(PART_HEAD + body.remaining());
        b.putInt(index).putInt(count).put(body);
        return b.flip();
    }

    /** A part of an install unit read back: its place in the unit, the unit's parts, and its slice. */
    public record Part(int index, int count, InstallRecord slice) {}

    /** Decodes a part of an install unit at position {@code lsn}; a malformed one is damage. */
    public static Part decodePart(ByteBuffer b, long lsn, String device) {
        if (b.remaining() < PART_HEAD) {
            throw bad(lsn, device, "a part of an install unit of " + b.remaining() + " bytes");
        }
        int index = b.getInt();
        int count = b.getInt();
        if (count < 2 || index < 0 || index >= count) {
            throw bad(lsn, device, "part " + index + " of an install unit of " + count + " parts");
        }
        return new Part(index, count, decode(b, lsn, device));
    }

    /** The parts of a unit, in order, as the one record they were cut from (see {@link #split}). */
    public static InstallRecord merge(List<InstallRecord> parts) {
        Lists all = new Lists();
        for (InstallRecord p : parts) {
            for (long a : p.allocs) {
                all.allocs.add(a);
            }
            for (long f : p.frees) {
                all.frees.add(f);
            }
            all.links.addAll(p.links);
            all.tables.addAll(p.tables);
        }
        return all.record();
    }

    private static long[] toArray(List<Long> l) {
        long[] out = new long[l.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = l.get(i);
        }
        return out;
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
