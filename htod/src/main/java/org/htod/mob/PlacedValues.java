package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import org.htod.core.CorruptStoreException;
import org.htod.core.alloc.Heap;
import org.htod.table.PlacedEntries;
import org.htod.table.TableHash;

/**
 * Recovery's part for placed values (see {@link WriteLayer}): the value of each key whose last
 * record in the log is a placed put lies in the block the record names, not in the log, and is
 * read from there and checked.
 *
 * <p>The write that carries such a record syncs the device before it writes the record's frames
 * ({@code Log.tryAppend} with {@code namesOtherWrites}), so a record read back always had its
 * block durable first: a block that does not hold the entry its record names was damaged, and
 * the open is refused. Only the last record of a key is looked at: the block of a record a later
 * one replaced may have been given back and reused once that later record was durable.
 */
final class PlacedValues {
    private PlacedValues() {}

    /** A data record read back: its position and operations. */
    record Logged(long lsn, List<DataRecord.Op> ops) {}

    /** The placed values read, by record and operation, and the bytes read for them. */
    record Settled(Map<At, byte[]> values, long bytesRead) {
        /** The value read for operation {@code op} of record {@code lsn}, or null if that operation is not the last of its key. */
        byte[] value(long lsn, int op) {
            return values.get(new At(lsn, op));
        }
    }

    /** Operation {@code op} of the record at {@code lsn}. */
    record At(long lsn, int op) {}

    /** The last operation of a key: where it lies, and what it is. */
    private record Last(At at, DataRecord.Op op) {}

    /**
     * Reads the placed values of {@code data} (in log order) that recovery needs: those of the
     * last record of each key; {@code hashes} gives the hash function of a table by its id.
     *
     * @throws CorruptStoreException if a block does not hold the entry its record names
     */
    static Settled settle(Heap heap, List<Logged> data, LongFunction<TableHash> hashes, String device) {
        Map<ByteBuffer, Last> last = new HashMap<>();
        for (Logged d : data) {
            for (int i = 0; i < d.ops().size(); i++) {
                DataRecord.Op op = d.ops().get(i);
                last.put(nameOf(op), new Last(new At(d.lsn(), i), op));
            }
        }
        List<Last> placed = new ArrayList<>();
        for (Last l : last.values()) {
            if (l.op().placed() != null) {
                placed.add(l);
            }
        }
        placed.sort(Comparator.comparingLong(l -> l.at().lsn())); // reads in about the order they were written
        Map<At, byte[]> values = new HashMap<>();
        long bytes = 0;
        for (Last l : placed) {
            DataRecord.Op op = l.op();
            DataRecord.Placed p = op.placed();
            TableHash hashing = hashes.apply(op.tableId());
            if (hashing == null) {
                throw new CorruptStoreException(device + ": the log record at position " + l.at().lsn() + " changes table"
                        + " id 0x" + Long.toHexString(op.tableId()) + ", of which neither the checkpoint nor the log holds"
                        + " a state", -1);
            }
            byte[] v = PlacedEntries.valueIfIntact(heap, p.block(), op.tableId(), hashing, op.key(), op.version(),
                    op.expiry(), p.headCrc(), p.valueLength());
            bytes += heap.blockSize(p.block());
            if (v == null) {
                throw new CorruptStoreException(device + ": the log record at position " + l.at().lsn() + " names the block"
                        + " at offset " + heap.address(p.block()) + " as holding its key's entry, which it does not (the"
                        + " block was made durable before the record was written)", heap.address(p.block()));
            }
            values.put(l.at(), v);
        }
        return new Settled(values, bytes);
    }

    private static ByteBuffer nameOf(DataRecord.Op op) {
        return ByteBuffer.allocate(8 + op.key().length).putLong(op.tableId()).put(op.key()).flip();
    }
}
