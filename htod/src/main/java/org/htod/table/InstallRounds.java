package org.htod.table;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.locks.Lock;
import org.htod.table.HashtableOnDisk.Found;
import org.htod.table.HashtableOnDisk.Item;

/**
 * A batch of changes applied to one table ({@link HashtableOnDisk#install}, and {@link
 * HashtableOnDisk#putAll} in direct mode): only the last change of each key counts, and the rest
 * go in rounds of at most one change a bucket, so that a round's new entries are allocated
 * together (OBA) after all of the round's installation reads, and then linked, none of them into
 * a chain another of the same round has just changed.
 *
 * <p>Static methods over the table, as its own. A round holds the writer locks of the stripes its
 * items fall in, taken in ascending order, so that two rounds (or a round and the doubler, which
 * takes them all in that order) never wait for each other in a circle; each link takes its
 * stripe's view lock for writing.
 */
final class InstallRounds {
    private InstallRounds() {}

    static void apply(HashtableOnDisk t, List<Item> items, boolean direct) {
        Map<ItemKey, Integer> last = new HashMap<>(2 * items.size());
        for (int i = 0; i < items.size(); i++) {
            last.put(new ItemKey(items.get(i)), i);
        }
        List<Item> pending = new ArrayList<>(last.size());
        for (int i = 0; i < items.size(); i++) {
            if (last.get(new ItemKey(items.get(i))) == i) {
                pending.add(items.get(i));
            }
        }
        while (!pending.isEmpty()) {
            pending = round(t, pending);
            if (direct) {
                t.gate.flushIfFull();
                t.maybeDouble();
            }
        }
    }

    /**
     * An item's key, compared by content and hashed by the item's 64-bit key hash, which it has
     * already: a wrapping {@code ByteBuffer} hashed the key's bytes at every lookup (about 8% of
     * the flusher's processor time at 64 writers of 200-byte values).
     */
    private record ItemKey(byte[] key, long hash) {
        ItemKey(Item it) {
            this(it.key, it.hash);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ItemKey k && k.hash == hash && Arrays.equals(k.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(hash * 0x9E3779B97F4A7C15L);
        }
    }

    /**
     * Takes the writer locks of {@code stripes} in ascending order once no failed doubling batch
     * is in the way, finishing one first (see {@link HashtableOnDisk#unfinished}).
     */
    private static void lockStripes(HashtableOnDisk t, TreeSet<Integer> stripes) {
        while (true) {
            for (int s : stripes) {
                t.writers[s].lock();
            }
            if (t.unfinished == null) {
                return;
            }
            for (int s : stripes.descendingSet()) {
                t.writers[s].unlock();
            }
            Doubler.finishFailed(t);
        }
    }

    /**
     * Whether the table's entry {@code cur} is the change {@code it} already: the same version,
     * expiry and value. A reopen's replay puts back into the buffer every change logged since the
     * oldest one still buffered, those installed before among them; installed again, each took a
     * new entry before its old one was freed, and in a heap full to its bound none could go in:
     * the buffer, several times its bound with them, then refused the removals that make room
     * (a store reopened full stayed full for good). The value is read only when the version and
     * expiry match, which outside a replay only a caller's explicit version makes so.
     */
    private static boolean holdsAlready(HashtableOnDisk t, StoredEntry cur, Item it) {
        if (cur == null || it.version == 0 || cur.version != it.version || cur.expiry != it.expiry) {
            return false;
        }
        Lock r = t.views[HashtableOnDisk.stripe(it.hash)].readLock(); // as findForWrite reads, beside a flush
        r.lock();
        try {
            return Arrays.equals(t.entries.decode(t.entries.load(cur.handle, true), true).value, it.value);
        } finally {
            r.unlock();
        }
    }

    /** Applies the items of distinct buckets among {@code items}; returns the others, for the next round. */
    private static List<Item> round(HashtableOnDisk t, List<Item> items) {
        TreeSet<Integer> stripes = new TreeSet<>();
        for (Item it : items) {
            stripes.add(HashtableOnDisk.stripe(it.hash));
        }
        lockStripes(t, stripes);
        try {
            t.ensureOpen();
            Shape s = t.shape;
            Set<Long> buckets = new HashSet<>();
            List<Item> round = new ArrayList<>();
            List<Item> later = new ArrayList<>();
            for (Item it : items) {
                BucketArray a = s.arrayOf(it.hash);
                long key = (it.hash & a.mask()) | (a == s.array ? 0 : Long.MIN_VALUE);
                (buckets.add(key) ? round : later).add(it);
            }
            long now = t.clock.getAsLong();
            List<Found> found = new ArrayList<>(round.size());
            List<Item> puts = new ArrayList<>(round.size());
            List<ByteBuffer> payloads = new ArrayList<>(round.size());
            int loaded = 0;
            int loadedCached = 0;
            for (Item it : round) {
                Found f = t.findForWrite(s, it.key, it.hash, false, HashtableOnDisk.stripe(it.hash));
                loaded += f.loaded;
                loadedCached += f.loadedCached;
                if (it.value == null) {
                    if (f.entry != null) {
                        t.unlink(HashtableOnDisk.stripe(it.hash), f);
                    }
                    continue;
                }
                StoredEntry cur = f.entry;
                if (it.placed != 0 && cur != null && cur.handle == it.placed) {
                    continue; // installed before a crash the log's replay followed: the table holds it
                }
                if (it.placed == 0 && holdsAlready(t, cur, it)) {
                    continue; // the same for a value in the entry: the replay put back a change installed before
                }
                boolean live = cur != null && !cur.expiredAt(now);
                long version = it.version != 0 ? it.version : live ? Change.after(cur.version) : 1;
                long next = cur != null ? cur.next : f.first;
                found.add(f);
                puts.add(it);
                if (it.placed == 0) {
                    payloads.add(Entries.encode(next, t.tableId, it.hash, version, it.expiry, it.key, it.value));
                }
            }
            t.gate.installRead(loaded, loadedCached); // once a round: two atomic adds, not two a key
            long[] written = payloads.isEmpty() ? new long[0] : t.heap.allocateBatch(payloads);
            t.gate.entriesWritten(written.length);
            for (int i = 0, wi = 0; i < puts.size(); i++) {
                Found f = found.get(i);
                Item it = puts.get(i);
                int st = HashtableOnDisk.stripe(it.hash);
                long handle = it.placed != 0 ? it.placed : written[wi++];
                Lock w = t.views[st].writeLock();
                w.lock();
                try {
                    long next = f.entry != null ? f.entry.next : f.first;
                    if (it.placed != 0 && next != 0) {
                        // A placed entry was written with no successor: its next is a link write.
                        t.gate.setLink(handle, Entries.NEXT_OFFSET, next, it.placedHeadCrc, t.views[st], true);
                    }
                    t.link(st, f.array, f.bucket, f.entry != null ? f.pred : 0, f.entry != null ? f.predSalt : f.bucket,
                            handle);
                    if (f.entry == null) {
                        t.count.incrementAndGet();
                        t.gate.touch(t);
                    }
                } finally {
                    w.unlock();
                }
                if (f.entry != null) {
                    t.gate.retire(f.entry.handle);
                }
            }
            if (t.syncEachWrite && !round.isEmpty()) {
                t.gate.sync();
            }
            return later;
        } finally {
            for (int s : stripes.descendingSet()) {
                t.writers[s].unlock();
            }
        }
    }
}
