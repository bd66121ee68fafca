package org.htod.core;

/** The heap or the device has no room for the request; nothing was written for it. */
public final class StoreFullException extends HtodException {
    private static final long serialVersionUID = 1L;

    /** Whether the heap had no room for a block, as opposed to the device failing a write. */
    private final boolean heapHasNoRoom;

    public StoreFullException(String message) {
        this(message, false);
    }

    /**
     * {@code heapHasNoRoom}: the heap, not the device, had no room for a block (it reached its
     * bound), and nothing changed; what may wait for room, and be retried once removals made
     * some, tells it from a device that failed a write, whose error must reach the caller.
     */
    public StoreFullException(String message, boolean heapHasNoRoom) {
        super(message);
        this.heapHasNoRoom = heapHasNoRoom;
    }

    public StoreFullException(String message, Throwable cause) {
        super(message, cause);
        this.heapHasNoRoom = false;
    }

    /** Whether the heap had no room for a block, the device working (see the constructor). */
    public boolean heapHasNoRoom() {
        return heapHasNoRoom;
    }
}
