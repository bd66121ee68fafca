package org.htod.odg;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.htod.Durability;
import org.htod.EntryTooLargeException;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.WriteBatch;

/**
 * Puts and removes over maps of one store, held in memory until {@link #commit()} writes them
 * together. Reads through the unit ({@link #get}) see its own staged writes first, so a caller
 * can plan a change over many records (a graph edit, a page rebuild) and refuse it half-way
 * without having written anything: closing a unit that was not committed discards it.
 *
 * <p>The dependency graph and the fragment cache make every change through a unit, and {@link
 * #commit()} is the one place their writes reach the store.
 *
 * <p><b>What a commit guarantees.</b> When {@code commit()} returns, every write of the unit is
 * durable. In log mode (the store's default) the unit is one {@link WriteBatch}, that is one log
 * record: a crash during the commit leaves all of the unit's writes or none of them, so a store
 * reopened after a crash never holds a publish's fragment without its rebuilt pages, nor the graph
 * with half an edit. A unit is limited to what one log record holds (about 1/8 of the store's log
 * region: 8 MiB with the default 64 MiB region); a larger one is refused by {@code commit()} with
 * an {@link EntryTooLargeException}, having written nothing. Readers running beside a commit may
 * still see part of it while it is applied to the write buffer.
 *
 * <p>In direct mode ({@code Htod.Builder.directMode(true)}) the store has no log and offers no
 * batch; the unit is then written map by map and synced once: durable once acknowledged, but a
 * crash during the commit can leave any subset of its writes on disk, each write whole or absent.
 * An edit that must know of such a crash sets a marker, written and synced before the unit's
 * writes and removed after them (one more sync for that unit): the dependency graph does, and
 * repairs itself when it is opened with its marker there.
 *
 * <p>Keys are compared with {@code equals}: stage through map views whose keys have value
 * equality (String, Long), and through the same {@link HtodMap} object for one map. A unit is
 * used by one thread; it is not thread-safe.
 */
public final class WriteUnit implements AutoCloseable {
    /** A staged removal, told apart from any value a caller can put (no map holds null). */
    private static final Object REMOVED = new Object();

    private final HtodStore store;
    /** Staged writes per map view, in the order the maps were first written; latest write per key. */
    private final Map<HtodMap<?, ?>, Map<Object, Object>> staged = new IdentityHashMap<>();
    private final List<HtodMap<?, ?>> order = new ArrayList<>();
    private final List<Runnable> beforeCommit = new ArrayList<>();
    /** Direct mode: keys put and synced before the unit's writes, removed once those are durable. */
    private final Map<HtodMap<?, ?>, Map<Object, Object>> markers = new IdentityHashMap<>();
    private final List<Runnable> onClose = new ArrayList<>();
    /** State an edit keeps for the length of this unit, by its owner (one graph edit per graph). */
    private final Map<Object, Object> attachments = new IdentityHashMap<>();
    private RuntimeException failure;
    private boolean committed;
    private boolean closed;

    /** A new, empty unit over maps of {@code store}. */
    public WriteUnit(HtodStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /** The value {@code key} has in {@code map} as this unit would leave it: staged, else stored. */
    @SuppressWarnings("unchecked")
    public <K, V> V get(HtodMap<K, V> map, K key) {
        ensureOpen();
        Map<Object, Object> m = staged.get(map);
        if (m != null && m.containsKey(key)) {
            Object v = m.get(key);
            return v == REMOVED ? null : (V) v;
        }
        return map.get(key);
    }

    /** Stages {@code map.put(key, value)}. */
    public <K, V> void put(HtodMap<K, V> map, K key, V value) {
        ensureOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        writes(map).put(key, value);
    }

    /** Stages {@code map.remove(key)}. */
    public <K, V> void remove(HtodMap<K, V> map, K key) {
        ensureOpen();
        Objects.requireNonNull(key, "key");
        writes(map).put(key, REMOVED);
    }

    /** Writes staged so far (one per key and map). */
    public int size() {
        int n = 0;
        for (Map<Object, Object> m : staged.values()) {
            n += m.size();
        }
        return n;
    }

    private Map<Object, Object> writes(HtodMap<?, ?> map) {
        return staged.computeIfAbsent(map, m -> {
            order.add(m);
            return new LinkedHashMap<>();
        });
    }

    /**
     * Writes every staged change and makes it durable: in log mode as one atomic batch, in direct
     * mode map by map; see the class comment for what holds if the process dies while this runs.
     *
     * @throws IllegalStateException if the unit was committed or closed already, or if a change
     *     made through it failed (the unit is then only fit to be closed)
     * @throws EntryTooLargeException in log mode, if the unit's writes exceed what one log record
     *     holds; nothing is written, and the unit is only fit to be closed
     */
    public void commit() {
        ensureOpen();
        for (Runnable r : beforeCommit) {
            r.run();
        }
        beforeCommit.clear();
        // ---- The one place a unit reaches the store.
        if (store.logged()) {
            // One WriteBatch, one log record: the fragment, the graph's records and every rebuilt
            // page are all there after a crash, or none of them.
            try (WriteBatch b = store.batch()) {
                for (HtodMap<?, ?> map : order) {
                    stage(b, map, staged.get(map));
                }
                b.commit();
            } catch (RuntimeException e) {
                fail(e);
                throw e;
            }
            if (store.durability() != Durability.SYNC) {
                store.sync(); // below SYNC a batch is not durable when it returns; a unit is
            }
        } else {
            // Direct mode has no log and no batch: map by map, puts in batches (putAll shares
            // allocation and link flushes), then one sync for the whole unit. Durable once this
            // returns, but not atomic across a crash. The markers are durable before any of the
            // unit's writes can reach the disk, and stay until all of them have: a store reopened
            // with a marker knows that a commit may have been cut part-way.
            if (!markers.isEmpty()) {
                for (Map.Entry<HtodMap<?, ?>, Map<Object, Object>> m : markers.entrySet()) {
                    apply(m.getKey(), m.getValue());
                }
                store.sync();
            }
            for (HtodMap<?, ?> map : order) {
                apply(map, staged.get(map));
            }
            store.sync();
            // Removed unsynced: lost in a crash, a marker only costs a needless check.
            for (Map.Entry<HtodMap<?, ?>, Map<Object, Object>> m : markers.entrySet()) {
                removeAll(m.getKey(), m.getValue().keySet());
            }
        }
        // ----
        committed = true;
    }

    @SuppressWarnings("unchecked")
    private static <K, V> void stage(WriteBatch b, HtodMap<K, V> map, Map<Object, Object> writes) {
        for (Map.Entry<Object, Object> e : writes.entrySet()) {
            if (e.getValue() == REMOVED) {
                b.remove(map, (K) e.getKey());
            } else {
                b.put(map, (K) e.getKey(), (V) e.getValue());
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <K, V> void apply(HtodMap<K, V> map, Map<Object, Object> writes) {
        Map<K, V> puts = new LinkedHashMap<>();
        List<K> removes = new ArrayList<>();
        for (Map.Entry<Object, Object> e : writes.entrySet()) {
            if (e.getValue() == REMOVED) {
                removes.add((K) e.getKey());
            } else {
                puts.put((K) e.getKey(), (V) e.getValue());
            }
        }
        map.putAll(puts);
        for (K k : removes) {
            map.remove(k);
        }
    }

    @SuppressWarnings("unchecked")
    private static <K> void removeAll(HtodMap<K, ?> map, java.util.Set<Object> keys) {
        for (Object k : keys) {
            map.remove((K) k);
        }
    }

    /** Whether {@link #commit()} has returned. */
    public boolean committed() {
        return committed;
    }

    /** Discards the unit if it was not committed, and releases what its edits hold (locks). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        staged.clear();
        order.clear();
        markers.clear();
        beforeCommit.clear();
        RuntimeException first = null;
        for (int i = onClose.size() - 1; i >= 0; i--) {
            try {
                onClose.get(i).run();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        onClose.clear();
        attachments.clear();
        if (first != null) {
            throw first;
        }
    }

    // ---- for the edits of this package

    /** Runs {@code r} at the start of {@link #commit()}: an edit moves its cached records into the unit. */
    void beforeCommit(Runnable r) {
        ensureOpen();
        beforeCommit.add(r);
    }

    /** Runs {@code r} when the unit is closed, committed or not, in the reverse order of registration. */
    void onClose(Runnable r) {
        ensureOpen();
        onClose.add(r);
    }

    /**
     * In direct mode, puts {@code key} into {@code map} and syncs before any write of the unit,
     * and removes it once they are all durable, so that finding it after a crash says that a
     * commit was cut and may have left any subset of its writes. Ignored in log mode, where a
     * commit is all or nothing. The key must not be written by the unit itself.
     */
    <K, V> void marker(HtodMap<K, V> map, K key, V value) {
        ensureOpen();
        if (!store.logged()) {
            markers.computeIfAbsent(map, m -> new LinkedHashMap<>()).put(key, value);
        }
    }

    /** Marks the unit as unfit for commit: a change made through it stopped half-way. */
    void fail(RuntimeException cause) {
        if (failure == null) {
            failure = cause;
        }
    }

    /** What {@code owner} keeps in this unit, made by {@code make} on first use. */
    @SuppressWarnings("unchecked")
    <T> T attachment(Object owner, Supplier<T> make) {
        ensureOpen();
        Object a = attachments.get(owner);
        if (a == null) {
            a = make.get();
            attachments.put(owner, a);
        }
        return (T) a;
    }

    HtodStore store() {
        return store;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("this write unit is closed");
        }
        if (committed) {
            throw new IllegalStateException("this write unit is committed already");
        }
        if (failure != null) {
            throw new IllegalStateException("a change in this write unit failed (" + failure.getMessage()
                    + "); close it and start again", failure);
        }
    }
}
