package org.htod;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.htod.table.Change;
import org.htod.table.TableWriter;

/**
 * Writes entries into a new store, keeping each entry's expiry and version: entries that carry
 * neither (a version of 1, no expiry) in batches through {@code putAll}, so that batch allocation
 * (OBA) places them together; the others one by one. Where a key may be met twice (a salvage's
 * scan of the heap), every entry goes one by one, and the key keeps its higher version: batched,
 * a version-1 entry met after a newer one was put over it by the batch's blind write.
 */
final class StoreCopier {
    private static final int BATCH = 512;

    private final HtodStore out;
    private final Map<String, TableWriter> tables = new HashMap<>();
    private final Map<String, List<byte[][]>> pending = new HashMap<>();
    private final long now;
    /** Whether a key may be met more than once: then nothing is batched. */
    private final boolean keysRepeat;
    private long entries;

    StoreCopier(HtodStore out, long now) {
        this(out, now, false);
    }

    StoreCopier(HtodStore out, long now, boolean keysRepeat) {
        this.out = out;
        this.now = now;
        this.keysRepeat = keysRepeat;
    }

    private TableWriter table(String map) {
        return tables.computeIfAbsent(map, m -> out.map(m, Codec.bytes(), Codec.bytes()).writer());
    }

    /** Writes one entry; an expired one is left out. */
    void add(String map, byte[] key, byte[] value, long expiry, long version) {
        if (expiry != 0 && expiry <= now) {
            return;
        }
        entries++;
        if (version == 1 && expiry == 0 && !keysRepeat) {
            List<byte[][]> batch = pending.computeIfAbsent(map, m -> new ArrayList<>());
            batch.add(new byte[][] {key, value});
            if (batch.size() >= BATCH) {
                flush(map, batch);
            }
            return;
        }
        table(map).update(key, cur -> cur != null && cur.version() >= version ? null
                : version == 0 ? Change.put(value, expiry) : Change.put(value, expiry, version));
    }

    /** Writes what waits in batches. */
    void finish() {
        for (Map.Entry<String, List<byte[][]>> e : pending.entrySet()) {
            flush(e.getKey(), e.getValue());
        }
        pending.clear();
    }

    private void flush(String map, List<byte[][]> batch) {
        if (batch.isEmpty()) {
            return;
        }
        List<byte[]> keys = new ArrayList<>(batch.size());
        List<byte[]> values = new ArrayList<>(batch.size());
        for (byte[][] kv : batch) {
            keys.add(kv[0]);
            values.add(kv[1]);
        }
        table(map).putAll(keys, values, 0);
        batch.clear();
    }

    /** Entries handed to {@link #add} and not left out as expired. */
    long entries() {
        return entries;
    }

    int maps() {
        return tables.size() + (int) pending.keySet().stream().filter(m -> !tables.containsKey(m)).count();
    }
}
