package org.htod.odg;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.htod.HtodMap;
import org.htod.HtodStore;

/**
 * Puts and removes over maps of one store, held in memory until {@link #commit()} writes them
 * together. Reads through the unit ({@link #get}) see its own staged writes first, so a caller
 * can plan a change over many records (a graph edit, a page rebuild) and refuse it half-way
 * without having written anything: closing a unit that was not committed discards it.
 *
 * <p>The dependency graph and the fragment cache make every change through a unit, and {@link
 * #commit()} is the one place their writes reach the store.
 *
 * <p><b>What a commit guarantees today.</b> When {@code commit()} returns, every write of the
 * unit is durable (the store has been synced). A crash <em>during</em> a commit can leave any
 * subset of the unit's writes on disk, each write whole or absent: the unit is durable once
 * acknowledged but not atomic across a crash. Readers running beside a commit may see part of it.
 * When the store offers {@code WriteBatch} (all or none across a crash), {@link #commit()} becomes
 * one batch and the unit becomes atomic, with no change to its callers.
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
     * Writes every staged change and makes it durable; see the class comment for what holds if
     * the process dies while this runs.
     *
     * @throws IllegalStateException if the unit was committed or closed already, or if a change
     *     made through it failed (the unit is then only fit to be closed)
     */
    public void commit() {
        ensureOpen();
        for (Runnable r : beforeCommit) {
            r.run();
        }
        beforeCommit.clear();
        // ---- The one place a unit reaches the store. With WriteBatch this block becomes:
        //   try (WriteBatch b = store.batch()) { for each staged write: b.put(map, k, v) or
        //       b.remove(map, k); b.commit(); }
        // and the unit is all or none across a crash. Today: map by map, puts in batches
        // (putAll shares allocation and link flushes), then one sync for the whole unit.
        for (HtodMap<?, ?> map : order) {
            apply(map, staged.get(map));
        }
        store.sync();
        // ----
        committed = true;
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
