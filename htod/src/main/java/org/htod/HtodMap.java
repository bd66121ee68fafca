package org.htod;

import java.time.Duration;
import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.htod.table.Change;
import org.htod.table.Mutation;
import org.htod.table.StoredEntry;
import org.htod.table.TableReader;
import org.htod.table.TableWriter;

/**
 * A persistent map: one named table of an {@link HtodStore}, seen through a key and a value
 * codec. Implements {@link ConcurrentMap} with its full contract: no null keys or values ({@link
 * NullPointerException}); {@code putIfAbsent}, {@code replace}, {@code remove(key, value)},
 * {@code compute*} and {@code merge} atomic per key; views that write through; iterators that are
 * weakly consistent (never {@code ConcurrentModificationException}, each entry at most once) and
 * stream from disk a bucket at a time, with {@code remove} removing the last key returned.
 *
 * <p>Values are compared by their encoded bytes wherever the map compares them ({@code
 * containsValue}, {@code remove(key, value)}, {@code replace(key, old, new)}, the entry set's
 * {@code contains} and {@code remove}), so {@code byte[]} values compare by content there.
 *
 * <p><b>Expiry.</b> {@link #put(Object, Object, Duration)} writes an entry that dies after a
 * time to live; every other write makes an entry that never expires. A dead entry is invisible to
 * reads and iteration, and removed by {@link #sweepExpired()} (in direct mode also by a read
 * that meets it, unless a write holds its part of the table at that moment or the read runs in a
 * function given to compute or merge; in log mode reads never write). Until then it still counts
 * in {@link #size()}.
 *
 * <p>A map stays usable across an online compaction ({@link HtodStore#compact}): it reaches its
 * table through a handle the compaction repoints to the new file. An iterator (of the map or a
 * view) opened before the compaction swapped the file throws {@link
 * org.htod.core.StoreClosedException} when used afterwards.
 *
 * <p>The functions given to {@code compute}, {@code computeIfAbsent}, {@code computeIfPresent}
 * and {@code merge} run under the key's lock. They may read any map of the store, and must not
 * change the store: a write to any of its maps, a new map, a {@link WriteBatch} commit, a sync, a
 * checkpoint, a copy or a verify from inside one throws {@link IllegalStateException}, and
 * changes nothing. Each of these can wait for the store's own work (in log mode the flusher,
 * which takes that key's lock; a heal of the log; a copy's hold on writers), which would wait for
 * the function: a function that wrote another map hung once the write buffer or the log filled.
 * Write after the function returns, or use a {@link WriteBatch} for changes that go together.
 * The map's codecs, where a change runs them under the key's lock (a compute's new value
 * encoded, the stored value decoded for its function), are held to the same rule; work handed to
 * another thread and waited for escapes it, and may hang as before.
 */
public final class HtodMap<K, V> extends AbstractMap<K, V> implements ConcurrentMap<K, V> {
    private final String name;
    private final TableReader reader;
    private final TableWriter writer;
    /** Log mode: where the map's table is now, what a {@link WriteBatch} writes to; null in direct mode. */
    private final HtodStore.MapHandle handle;
    private final Codec<K> keys;
    private final Codec<V> values;
    private final LongSupplier clock;
    private final HtodStore store;
    private Set<K> keySet;
    private Collection<V> valueView;
    private Set<Map.Entry<K, V>> entrySet;

    HtodMap(String name, MeteredTable table, HtodStore.MapHandle handle, Codec<K> keys, Codec<V> values,
            LongSupplier clock, HtodStore store) {
        this.name = name;
        this.handle = handle;
        this.store = store;
        this.reader = table;
        this.writer = table;
        this.keys = keys;
        this.values = values;
        this.clock = clock;
    }

    /** The name of this map in its store. */
    public String name() {
        return name;
    }

    // ------------------------------------------------------------------ encoding

    HtodStore store() {
        return store;
    }

    /** The map's writer: metered, and passing the store's gate. */
    TableWriter writer() {
        return writer;
    }

    /** Where the map's table is now (log mode); null in direct mode. */
    HtodStore.MapHandle handle() {
        return handle;
    }

    long expiryOf(Duration ttl) {
        return expiry(ttl);
    }

    byte[] keyBytes(K key) {
        byte[] b = keys.encode(Objects.requireNonNull(key, "key"));
        if (b.length > Htod.MAX_KEY_BYTES) {
            throw new EntryTooLargeException("a key encodes to " + b.length + " bytes; map '" + name + "' takes keys of at most "
                    + Htod.MAX_KEY_BYTES + " bytes");
        }
        return b;
    }

    /** The bytes of a value to be put under the key of bytes {@code key}: in log mode both go in one log record. */
    byte[] valueBytes(byte[] key, V value) {
        byte[] b = values.encode(Objects.requireNonNull(value, "value"));
        long max = store.maxValueBytes(key.length);
        if (b.length > max) {
            throw new EntryTooLargeException("a value encodes to " + b.length + " bytes; map '" + name
                    + "' takes values of at most " + max + " bytes" + (max < Htod.MAX_VALUE_BYTES
                            ? " (one log record: give the store a larger logSize for larger values)" : ""));
        }
        return b;
    }

    /** The bytes of a key given as an Object, or null if it cannot be a key of this map. */
    @SuppressWarnings("unchecked")
    private byte[] queryKey(Object key) {
        Objects.requireNonNull(key, "key");
        try {
            return keys.encode((K) key);
        } catch (ClassCastException e) {
            return null;
        }
    }

    @SuppressWarnings("unchecked")
    private byte[] queryValue(Object value) {
        Objects.requireNonNull(value, "value");
        try {
            return values.encode((V) value);
        } catch (ClassCastException e) {
            return null;
        }
    }

    private V value(StoredEntry e) {
        return e == null ? null : values.decode(e.value());
    }

    private static boolean sameValue(StoredEntry e, byte[] value) {
        return e != null && Arrays.equals(e.value(), value);
    }

    // ------------------------------------------------------------------ queries

    @Override
    public V get(Object key) {
        byte[] k = queryKey(key);
        return k == null ? null : value(reader.get(k));
    }

    @Override
    public boolean containsKey(Object key) {
        byte[] k = queryKey(key);
        return k != null && reader.containsKey(k);
    }

    @Override
    public boolean containsValue(Object value) {
        byte[] v = queryValue(value);
        if (v == null) {
            return false;
        }
        for (Iterator<StoredEntry> it = reader.iterator(true); it.hasNext();) {
            if (Arrays.equals(it.next().value(), v)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int size() {
        return (int) Math.min(Integer.MAX_VALUE, reader.size());
    }

    /** {@link #size()} without the int cap. */
    public long longSize() {
        return reader.size();
    }

    @Override
    public boolean isEmpty() {
        return reader.size() == 0;
    }

    // ------------------------------------------------------------------ updates

    @Override
    public V put(K key, V value) {
        byte[] k = keyBytes(key);
        return put(k, valueBytes(k, value), 0);
    }

    /**
     * Maps {@code key} to {@code value} for {@code ttl}; afterwards the entry is dead: invisible,
     * and removed by a later write of the key, by {@link #sweepExpired()}, or in direct mode by a
     * read that meets it (see the class comment).
     *
     * @return the previous live value, or null
     */
    public V put(K key, V value, Duration ttl) {
        byte[] k = keyBytes(key);
        return put(k, valueBytes(k, value), expiry(ttl));
    }

    private long expiry(Duration ttl) {
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("a time to live must be positive, found " + ttl);
        }
        long now = clock.getAsLong();
        long ms;
        try {
            ms = ttl.toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE; // longer than milliseconds can say: as good as never
        }
        return ms > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + Math.max(1, ms);
    }

    /**
     * Maps {@code key} to {@code value}, as {@link #put(Object, Object)} does, without reading or
     * returning the previous value: a blind write. Where the old value is not wanted, this spares
     * its read: a copy out of the cache, or on a miss the old entry read whole from the device and
     * checked, where a blind write reads only its first bytes (its version and expiry).
     */
    public void set(K key, V value) {
        byte[] k = keyBytes(key);
        byte[] v = valueBytes(k, value);
        writer.update(k, Mutation.blind(cur -> Change.put(v, 0)));
    }

    private V put(byte[] k, byte[] v, long expiry) {
        StoredEntry[] old = {null};
        writer.update(k, cur -> {
            old[0] = cur;
            return Change.put(v, expiry);
        });
        return value(old[0]);
    }

    /**
     * Puts {@code value} with a version the caller chose, if it is newer than the key's: a version
     * not above the stored one is ignored (the Thomas write rule), so that applying the same
     * versioned writes twice, or out of order, leaves the newest. Returns whether it was applied.
     * A key that is absent (or was removed) takes any version.
     *
     * @throws IllegalArgumentException if {@code version} is below 1
     */
    public boolean putVersioned(K key, V value, long version) {
        if (version < 1) {
            throw new IllegalArgumentException("a version is at least 1, found " + version);
        }
        byte[] k = keyBytes(key);
        byte[] v = valueBytes(k, value);
        boolean[] applied = {false};
        writer.update(k, Mutation.blind(cur -> {
            applied[0] = cur == null || version > cur.version();
            return applied[0] ? Change.put(v, 0, version) : null;
        }));
        return applied[0];
    }

    /**
     * The version of the key's entry: 1 when it was inserted, +1 on each replacement, or the
     * version a caller gave; 0 if the key is absent.
     */
    public long version(Object key) {
        byte[] k = queryKey(key);
        StoredEntry e = k == null ? null : reader.get(k);
        return e == null ? 0 : e.version();
    }

    @Override
    public V putIfAbsent(K key, V value) {
        byte[] k = keyBytes(key);
        byte[] v = valueBytes(k, value);
        StoredEntry[] old = {null};
        writer.update(k, cur -> {
            old[0] = cur;
            return cur == null ? Change.put(v, 0) : null;
        });
        return value(old[0]);
    }

    @Override
    public V replace(K key, V value) {
        byte[] k = keyBytes(key);
        byte[] v = valueBytes(k, value);
        StoredEntry[] old = {null};
        writer.update(k, cur -> {
            old[0] = cur;
            return cur == null ? null : Change.put(v, 0);
        });
        return value(old[0]);
    }

    @Override
    public boolean replace(K key, V oldValue, V newValue) {
        byte[] k = keyBytes(key);
        byte[] o = valueBytes(k, oldValue);
        byte[] v = valueBytes(k, newValue);
        boolean[] done = {false};
        writer.update(k, cur -> {
            done[0] = sameValue(cur, o);
            return done[0] ? Change.put(v, 0) : null;
        });
        return done[0];
    }

    @Override
    public V remove(Object key) {
        byte[] k = queryKey(key);
        if (k == null) {
            return null;
        }
        StoredEntry[] old = {null};
        writer.update(k, cur -> {
            old[0] = cur;
            return cur == null ? null : Change.REMOVE;
        });
        return value(old[0]);
    }

    /**
     * Removes {@code key}, as {@link #remove(Object)} does, without reading its value (a blind
     * write); returns whether a live entry was there.
     */
    public boolean delete(Object key) {
        byte[] k = queryKey(key);
        if (k == null) {
            return false;
        }
        boolean[] present = {false};
        writer.update(k, Mutation.blind(cur -> {
            present[0] = cur != null;
            return cur == null ? null : Change.REMOVE;
        }));
        return present[0];
    }

    @Override
    public boolean remove(Object key, Object value) {
        byte[] k = queryKey(key);
        byte[] v = queryValue(value);
        if (k == null || v == null) {
            return false;
        }
        boolean[] done = {false};
        writer.update(k, cur -> {
            done[0] = sameValue(cur, v);
            return done[0] ? Change.REMOVE : null;
        });
        return done[0];
    }

    @Override
    public V compute(K key, BiFunction<? super K, ? super V, ? extends V> fn) {
        Objects.requireNonNull(fn, "remappingFunction");
        byte[] k = keyBytes(key);
        List<V> out = new ArrayList<>(1);
        writer.update(k, cur -> {
            V nv = fn.apply(key, value(cur));
            out.add(nv);
            if (nv == null) {
                return cur == null ? null : Change.REMOVE;
            }
            return Change.put(valueBytes(k, nv), 0);
        });
        return out.get(out.size() - 1); // the last call decided: a full log can make it run again
    }

    @Override
    public V computeIfAbsent(K key, Function<? super K, ? extends V> fn) {
        Objects.requireNonNull(fn, "mappingFunction");
        byte[] k = keyBytes(key);
        List<V> out = new ArrayList<>(1);
        writer.update(k, cur -> {
            if (cur != null) {
                out.add(value(cur));
                return null;
            }
            V nv = fn.apply(key);
            out.add(nv);
            return nv == null ? null : Change.put(valueBytes(k, nv), 0);
        });
        return out.get(out.size() - 1); // the last call decided: a full log can make it run again
    }

    @Override
    public V computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> fn) {
        Objects.requireNonNull(fn, "remappingFunction");
        byte[] k = keyBytes(key);
        List<V> out = new ArrayList<>(1);
        writer.update(k, cur -> {
            if (cur == null) {
                out.add(null);
                return null;
            }
            V nv = fn.apply(key, value(cur));
            out.add(nv);
            return nv == null ? Change.REMOVE : Change.put(valueBytes(k, nv), 0);
        });
        return out.get(out.size() - 1); // the last call decided: a full log can make it run again
    }

    @Override
    public V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> fn) {
        Objects.requireNonNull(fn, "remappingFunction");
        byte[] k = keyBytes(key);
        byte[] given = valueBytes(k, value);
        List<V> out = new ArrayList<>(1);
        writer.update(k, cur -> {
            if (cur == null) {
                out.add(value);
                return Change.put(given, 0);
            }
            V nv = fn.apply(value(cur), value);
            out.add(nv);
            return nv == null ? Change.REMOVE : Change.put(valueBytes(k, nv), 0);
        });
        return out.get(out.size() - 1); // the last call decided: a full log can make it run again
    }

    /**
     * Puts every mapping, in rounds that share one batch allocation (OBA) and, at durability
     * SYNC, one flush and sync. Not atomic.
     */
    @Override
    public void putAll(Map<? extends K, ? extends V> m) {
        List<byte[]> ks = new ArrayList<>();
        List<byte[]> vs = new ArrayList<>();
        long bytes = 0;
        for (Map.Entry<? extends K, ? extends V> e : m.entrySet()) {
            byte[] k = keyBytes(e.getKey());
            byte[] v = valueBytes(k, e.getValue());
            ks.add(k);
            vs.add(v);
            bytes += k.length + v.length;
            if (ks.size() >= PUT_ALL_BATCH || bytes >= PUT_ALL_BATCH_BYTES) {
                writer.putAll(ks, vs, 0);
                ks.clear();
                vs.clear();
                bytes = 0;
            }
        }
        if (!ks.isEmpty()) {
            writer.putAll(ks, vs, 0);
        }
    }

    private static final int PUT_ALL_BATCH = 1024;
    private static final long PUT_ALL_BATCH_BYTES = 8L << 20;

    @Override
    public void clear() {
        writer.clear();
    }

    /** Removes every entry whose time to live has passed; returns how many. */
    public long sweepExpired() {
        return writer.sweepExpired();
    }

    // ------------------------------------------------------------------ views

    @Override
    public Set<K> keySet() {
        Set<K> s = keySet;
        return s != null ? s : (keySet = new KeySet());
    }

    @Override
    public Collection<V> values() {
        Collection<V> c = valueView;
        return c != null ? c : (valueView = new Values());
    }

    @Override
    public Set<Map.Entry<K, V>> entrySet() {
        Set<Map.Entry<K, V>> s = entrySet;
        return s != null ? s : (entrySet = new EntrySet());
    }

    /** Iterates the table; {@code remove} removes the last key returned, whatever its value now. */
    private abstract class Iter<T> implements Iterator<T> {
        private final Iterator<StoredEntry> it;
        private byte[] last;

        Iter(boolean withValues) {
            this.it = reader.iterator(withValues);
        }

        @Override
        public boolean hasNext() {
            return it.hasNext();
        }

        @Override
        public T next() {
            if (!it.hasNext()) {
                throw new NoSuchElementException();
            }
            StoredEntry e = it.next();
            last = e.key();
            return make(e);
        }

        abstract T make(StoredEntry e);

        @Override
        public void remove() {
            if (last == null) {
                throw new IllegalStateException("next() has not returned an element to remove");
            }
            byte[] k = last;
            last = null;
            writer.update(k, cur -> cur == null ? null : Change.REMOVE);
        }
    }

    private final class KeySet extends AbstractSet<K> {
        @Override
        public Iterator<K> iterator() {
            return new Iter<K>(false) {
                @Override
                K make(StoredEntry e) {
                    return keys.decode(e.key());
                }
            };
        }

        @Override
        public int size() {
            return HtodMap.this.size();
        }

        @Override
        public boolean isEmpty() {
            return HtodMap.this.isEmpty();
        }

        @Override
        public boolean contains(Object o) {
            return HtodMap.this.containsKey(o);
        }

        @Override
        public boolean remove(Object o) {
            return HtodMap.this.remove(o) != null;
        }

        @Override
        public void clear() {
            HtodMap.this.clear();
        }
    }

    private final class Values extends AbstractCollection<V> {
        @Override
        public Iterator<V> iterator() {
            return new Iter<V>(true) {
                @Override
                V make(StoredEntry e) {
                    return values.decode(e.value());
                }
            };
        }

        @Override
        public int size() {
            return HtodMap.this.size();
        }

        @Override
        public boolean isEmpty() {
            return HtodMap.this.isEmpty();
        }

        @Override
        public boolean contains(Object o) {
            return HtodMap.this.containsValue(o);
        }

        @Override
        public void clear() {
            HtodMap.this.clear();
        }
    }

    private final class EntrySet extends AbstractSet<Map.Entry<K, V>> {
        @Override
        public Iterator<Map.Entry<K, V>> iterator() {
            return new Iter<Map.Entry<K, V>>(true) {
                @Override
                Map.Entry<K, V> make(StoredEntry e) {
                    return new MapEntry(keys.decode(e.key()), values.decode(e.value()));
                }
            };
        }

        @Override
        public int size() {
            return HtodMap.this.size();
        }

        @Override
        public boolean isEmpty() {
            return HtodMap.this.isEmpty();
        }

        @Override
        public boolean contains(Object o) {
            if (!(o instanceof Map.Entry)) {
                return false;
            }
            Map.Entry<?, ?> e = (Map.Entry<?, ?>) o;
            if (e.getKey() == null || e.getValue() == null) {
                return false;
            }
            byte[] k = queryKey(e.getKey());
            byte[] v = queryValue(e.getValue());
            return k != null && v != null && sameValue(reader.get(k), v);
        }

        @Override
        public boolean remove(Object o) {
            if (!(o instanceof Map.Entry)) {
                return false;
            }
            Map.Entry<?, ?> e = (Map.Entry<?, ?>) o;
            return e.getKey() != null && e.getValue() != null && HtodMap.this.remove(e.getKey(), e.getValue());
        }

        @Override
        public void clear() {
            HtodMap.this.clear();
        }
    }

    /** An entry of the entry set; {@code setValue} writes through to the map. */
    private final class MapEntry extends AbstractMap.SimpleEntry<K, V> {
        private static final long serialVersionUID = 1L;

        MapEntry(K key, V value) {
            super(key, value);
        }

        @Override
        public V setValue(V value) {
            Objects.requireNonNull(value, "value");
            V old = super.setValue(value);
            HtodMap.this.put(getKey(), value);
            return old;
        }
    }
}
