package org.htod;

/** When a write is durable, relative to the moment the call that made it returns. */
public enum Durability {
    /**
     * Durable before the call returns: each write ends with a flush of its links and a sync of
     * the device, shared by the writes of other threads that run at the same time.
     */
    SYNC,
    /**
     * Synced by a background thread at a fixed interval ({@link Htod.Builder#syncInterval}): a
     * write that returned more than one interval plus one sync ago is durable; later ones may be
     * lost in a crash or when the process ends without closing the store. A crash never leaves a
     * half-written entry or loses an older one.
     */
    ASYNC,
    /**
     * Durable only after {@link HtodStore#sync()} or {@link HtodStore#close()}: writes since the
     * last sync may be lost in a crash, or when the process ends without closing the store (the
     * links that make them reachable wait in memory for a flush). Like the others, a crash never
     * leaves a half-written entry or loses a write that was synced.
     */
    NONE
}
