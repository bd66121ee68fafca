package org.htod.table;

import java.util.List;

/**
 * The write side of a table, on key and value bytes. The direct implementation ({@link
 * HashtableOnDisk}) writes entries straight into the heap in crash-safe order; the write-buffer
 * layer (log, group commit, flusher) will implement the same interface, so that the map above
 * does not change when it slots in.
 */
public interface TableWriter {
    /**
     * Atomically, for {@code key}: reads its entry, asks {@code mutation} what to do, and does it.
     * The mutation runs under the key's lock and must not touch the table itself.
     */
    void update(byte[] key, Mutation mutation);

    /**
     * Writes many keys at once, in rounds of at most one key per bucket: a round's new entries
     * are allocated together (OBA), and with durability SYNC share one flush of their links. Each
     * key is written as by a put; later occurrences of a key win. Not atomic as a whole.
     */
    void putAll(List<byte[]> keys, List<byte[]> values, long expiry);

    /** Removes every entry. */
    void clear();

    /** Removes entries whose expiry has passed; returns how many. */
    long sweepExpired();
}
