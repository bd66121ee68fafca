package org.htod;

/**
 * When a write is durable, relative to the moment the call that made it returns. One level holds
 * for a whole store ({@link Htod.Builder#durability}); what makes a write durable depends on the
 * store's mode.
 *
 * <p>In log mode (the default) a write is durable once its log record is: a group commit writes
 * every record appended so far with one device write and syncs the device once, and any group
 * commit covers every record appended before it (see {@code docs/WRITE-LAYER.md}). In direct mode
 * ({@link Htod.Builder#directMode}) a write is durable once a flush has written its links after
 * the sync that made its entry durable, and the device has synced again.
 *
 * <p>At every level a crash never leaves a half-written change, never loses a write that was
 * durable, and (in log mode) keeps a {@link WriteBatch} whole or not at all.
 */
public enum Durability {
    /**
     * Durable before the call returns. Log mode: the call returns after a group commit has synced
     * its log record; writers of other threads share that write and that sync, and the change
     * becomes visible to readers only once it is durable. Direct mode: each write ends with a
     * flush of its links and a sync of the device, shared by the writes of other threads that run
     * at the same time. A write that fails with a device error may still take effect in direct
     * mode: the links of a failed flush stay in memory and are written by the next one, and until
     * then even a write that changes nothing (a removal of a key found absent) syncs before it
     * returns.
     */
    SYNC,
    /**
     * Durable within about one interval ({@link Htod.Builder#syncInterval}, default 1 second)
     * after the call returns. Log mode: the call returns once its record is appended in memory,
     * and the change is visible at once; the write layer's flusher syncs the log whenever more
     * than one interval has passed since its last such sync (checking at least every 50 ms while
     * idle), and any group commit made meanwhile covers the record sooner. Direct mode: a
     * background thread syncs at that interval; when one of its syncs fails, it tries again at the
     * next, and until one succeeds every write syncs first and, if that fails too, is refused with
     * the device's error, not made. A write that returned more than about one
     * interval ago is durable; later ones may be lost in a crash, or when the process ends without
     * closing the store.
     */
    ASYNC,
    /**
     * Durable only after {@link HtodStore#sync()} or {@link HtodStore#close()}, with no promise
     * before: writes since the last sync may be lost in a crash, or when the process ends without
     * closing the store. Log mode: the change is visible at once, and a group commit made for
     * another reason (the flusher's next install, another thread's sync) makes it durable too.
     * Direct mode: the links that make the writes reachable wait in memory for a flush.
     */
    NONE
}
