package org.htod.core.alloc;

import java.util.HashMap;

/**
 * The heap's extents defined since its last sync ({@link Heap#fresh}), by block address. A map
 * of addresses that mixes them before hashing: a {@code HashMap<Long, ...>} hashes an address
 * by its own bits, and the blocks one batch carves in a row (addresses a block size apart) fell
 * into a few dozen of its bins, which it turned into trees; the allocator's lookups there took
 * about 5% of the flusher's processor time at 64 writers of 200-byte values. Multiplying by an
 * odd constant is a bijection of the 64-bit values, so the mixed keys stay distinct.
 *
 * <p>No lock: the heap's lock guards it, as every other field of the heap's allocation state.
 */
final class FreshExtents {
    private static final long MIX = 0x9E3779B97F4A7C15L;
    private final HashMap<Long, Heap.FreshExtent> map = new HashMap<>();

    Heap.FreshExtent get(long addr) {
        return map.get(addr * MIX);
    }

    boolean containsKey(long addr) {
        return map.containsKey(addr * MIX);
    }

    /** Sets the extent at {@code addr}; returns the one it replaces, or null. */
    Heap.FreshExtent put(long addr, Heap.FreshExtent f) {
        return map.put(addr * MIX, f);
    }

    void remove(long addr) {
        map.remove(addr * MIX);
    }

    void clear() {
        map.clear();
    }

    int size() {
        return map.size();
    }

    boolean isEmpty() {
        return map.isEmpty();
    }
}
