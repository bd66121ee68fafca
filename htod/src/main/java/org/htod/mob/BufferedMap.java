package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.LongSupplier;
import org.htod.table.HashtableOnDisk;
import org.htod.table.Mutation;
import org.htod.table.StoredEntry;
import org.htod.table.TableReader;
import org.htod.table.TableWriter;

/**
 * One map of a logged store, as the map API sees it: reads look in the write buffer first, then
 * in the table; writes go through the write layer (log, then buffer). Reads never write, not
 * even to remove an expired entry: that is {@link #sweepExpired}'s work, through the log.
 */
public final class BufferedMap implements TableReader, TableWriter {
    final WriteLayer layer;
    final HashtableOnDisk table;
    final long tableId;
    private final Mob mob;
    private final LongSupplier clock;

    BufferedMap(WriteLayer layer, HashtableOnDisk table, Mob mob, LongSupplier clock) {
        this.layer = layer;
        this.table = table;
        this.tableId = table.tableId();
        this.mob = mob;
        this.clock = clock;
    }

    /** The key's live entry (buffer first), or null. */
    StoredEntry current(byte[] key, long hash, boolean withValue) {
        Mob.Pending p = mob.get(tableId, key);
        if (p != null) {
            return buffered(p, key, hash, clock.getAsLong());
        }
        StoredEntry e = table.read(key, withValue);
        return e == null || e.expiredAt(clock) ? null : e; // the clock read only for an entry with an expiry
    }

    /** The buffered change {@code p} of {@code key} as the entry it makes at {@code now}: null if removed or expired. */
    static StoredEntry buffered(Mob.Pending p, byte[] key, long hash, long now) {
        Mob.Value v = p.current;
        return v.liveAt(now) ? StoredEntry.buffered(hash, v.version(), v.expiry(), key, v.value()) : null;
    }

    @Override
    public StoredEntry get(byte[] key) {
        layer.ensureOpen();
        return current(key, table.hash(key), true);
    }

    @Override
    public boolean containsKey(byte[] key) {
        layer.ensureOpen();
        return current(key, table.hash(key), false) != null;
    }

    /**
     * The table's count plus the buffer's delta, read between installs: an install changes the
     * count before it releases its keys from the buffer, and a size read across one counted its
     * keys twice or not at all (a quiescent map of 142 entries said 193 after a crash reopen,
     * while the flusher installed what the log replayed).
     */
    @Override
    public long size() {
        layer.ensureOpen();
        return layer.size(this);
    }

    /** The table's count and the buffer's difference from it; the caller keeps installs out (see {@link WriteLayer#size}). */
    long sizeNow() {
        return Math.max(0, table.size() + mob.delta(tableId, true, p -> table.read(p.key, false) != null));
    }

    @Override
    public void update(byte[] key, Mutation mutation) {
        layer.update(this, key, mutation);
    }

    @Override
    public void putAll(List<byte[]> keys, List<byte[]> values, long expiry) {
        layer.putAll(this, keys, values, expiry);
    }

    @Override
    public void clear() {
        layer.ensureOpen();
        // Expired entries too, as direct mode's clear removes them: left behind, they still
        // counted in the map's size, and a clock set back brought them back.
        for (Iterator<StoredEntry> it = new Merged(true, false); it.hasNext();) {
            byte[] k = it.next().key();
            layer.updateRaw(this, k, raw -> raw == null ? null : org.htod.table.Change.REMOVE);
        }
    }

    @Override
    public long sweepExpired() {
        layer.ensureOpen();
        long removed = 0;
        long now = clock.getAsLong();
        Iterator<StoredEntry> it = new Merged(true, false);
        while (it.hasNext()) {
            StoredEntry e = it.next();
            if (e.expiredAt(now)) {
                boolean[] done = {false};
                // removes the key only if it is still expired when its lock is held
                layer.updateRaw(this, e.key(), raw -> {
                    done[0] = raw != null && raw.expiredAt(clock.getAsLong());
                    return done[0] ? org.htod.table.Change.REMOVE : null;
                });
                if (done[0]) {
                    removed++;
                }
            }
        }
        return removed;
    }

    @Override
    public Iterator<StoredEntry> iterator(boolean withValues) {
        layer.ensureOpen();
        return new Merged(false, withValues);
    }

    /**
     * Iterates the buffer's keys of this map (as they were when the iteration began), then the
     * table's, skipping those: each key once; a key changed meanwhile may show either state, as a
     * weakly consistent iterator may. A table entry whose key entered the buffer after the
     * iteration began shows the buffer's state.
     */
    private final class Merged implements Iterator<StoredEntry> {
        private final boolean includeExpired;
        private final boolean withValues;
        private final ArrayDeque<StoredEntry> buffered = new ArrayDeque<>();
        private final Set<ByteBuffer> seen = new HashSet<>();
        private final Iterator<StoredEntry> tableEntries;
        private StoredEntry next;

        Merged(boolean includeExpired, boolean withValues) {
            this.includeExpired = includeExpired;
            this.withValues = withValues;
            long now = clock.getAsLong();
            for (Mob.Pending p : mob.of(tableId)) {
                Mob.Value v = p.current;
                seen.add(ByteBuffer.wrap(p.key));
                if (v.value() != null && (includeExpired || v.liveAt(now))) {
                    buffered.add(StoredEntry.buffered(p.hash, v.version(), v.expiry(), p.key, withValues ? v.value() : null));
                }
            }
            this.tableEntries = includeExpired ? table.iteratorWithExpired(withValues) : table.iterator(withValues);
        }

        @Override
        public boolean hasNext() {
            while (next == null) {
                if (!buffered.isEmpty()) {
                    next = buffered.poll();
                } else if (tableEntries.hasNext()) {
                    StoredEntry e = tableEntries.next();
                    if (!seen.isEmpty() && seen.contains(ByteBuffer.wrap(e.key()))) { // no key hashed when none was buffered
                        continue;
                    }
                    Mob.Pending p = mob.get(tableId, e.key());
                    if (p == null) {
                        next = e;
                    } else {
                        Mob.Value v = p.current;
                        long now = clock.getAsLong();
                        if (v.value() != null && (includeExpired || v.liveAt(now))) {
                            next = StoredEntry.buffered(e.hash(), v.version(), v.expiry(), e.key(), withValues ? v.value() : null);
                        }
                    }
                } else {
                    return false;
                }
            }
            return true;
        }

        @Override
        public StoredEntry next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            StoredEntry e = next;
            next = null;
            return e;
        }
    }
}
