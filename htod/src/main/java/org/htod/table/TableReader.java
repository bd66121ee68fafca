package org.htod.table;

/**
 * The read side of a table, on key and value bytes. With the write-buffer layer, reads look in
 * the buffer before the hashtable; that layer implements this interface too.
 */
public interface TableReader {
    /** The live entry for {@code key}, with its value, or null if absent or expired. */
    StoredEntry get(byte[] key);

    /** Whether {@code key} has a live entry, without reading the value when it can be avoided. */
    boolean containsKey(byte[] key);

    /** Entries currently in the table, including expired ones not yet removed. O(1). */
    long size();

    /**
     * A weakly consistent iterator over the live entries, streaming from disk one bucket at a time:
     * it never throws {@code ConcurrentModificationException}, returns each entry at most once
     * unless it is modified meanwhile, and returns every entry present throughout the iteration.
     * With {@code withValues} false the entries carry their key only.
     */
    java.util.Iterator<StoredEntry> iterator(boolean withValues);
}
