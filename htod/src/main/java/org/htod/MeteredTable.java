package org.htod;

import java.util.Iterator;
import java.util.List;
import org.htod.table.Change;
import org.htod.table.Mutation;
import org.htod.table.StoredEntry;
import org.htod.table.TableReader;
import org.htod.table.TableWriter;

/**
 * A map's table seen through its store's {@link OpMeter}: a read is a get; an update is a put or
 * a remove by what it did (a mutation that left the key alone is counted apart, untimed). Clear,
 * sweeps and iteration are not counted.
 */
final class MeteredTable implements TableReader, TableWriter {
    private final TableReader reader;
    private final TableWriter writer;
    private final OpMeter meter;

    MeteredTable(TableReader reader, TableWriter writer, OpMeter meter) {
        this.reader = reader;
        this.writer = writer;
        this.meter = meter;
    }

    @Override
    public StoredEntry get(byte[] key) {
        long t = meter.start();
        StoredEntry e = reader.get(key);
        meter.done(OpMeter.Op.GET, 1, t);
        return e;
    }

    @Override
    public boolean containsKey(byte[] key) {
        long t = meter.start();
        boolean found = reader.containsKey(key);
        meter.done(OpMeter.Op.GET, 1, t);
        return found;
    }

    @Override
    public long size() {
        return reader.size();
    }

    @Override
    public Iterator<StoredEntry> iterator(boolean withValues) {
        return reader.iterator(withValues);
    }

    @Override
    public void update(byte[] key, Mutation mutation) {
        long t = meter.start();
        Change[] done = {null};
        writer.update(key, cur -> done[0] = mutation.apply(cur));
        if (done[0] == null) {
            meter.unchanged();
        } else {
            meter.done(done[0].isRemove() ? OpMeter.Op.REMOVE : OpMeter.Op.PUT, 1, t);
        }
    }

    @Override
    public void putAll(List<byte[]> keys, List<byte[]> values, long expiry) {
        long t = meter.start();
        writer.putAll(keys, values, expiry);
        meter.done(OpMeter.Op.PUT, keys.size(), t);
    }

    @Override
    public void clear() {
        writer.clear();
    }

    @Override
    public long sweepExpired() {
        return writer.sweepExpired();
    }
}
