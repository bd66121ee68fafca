package org.htod.core.alloc;

import org.htod.core.HtodException;

/**
 * The test kit's way into a heap's failure state: a heap that met a device error in the middle of
 * a change refuses every later change (allocations, frees, writes into blocks) until the store is
 * reopened. In log mode the paths there are rare (a sync during an allocation no longer leads
 * there); a test of what the layers above do when a change is refused puts the heap there itself.
 */
public final class HeapFaults {
    private HeapFaults() {}

    /** From now on {@code heap} refuses changes, naming {@code why}. */
    public static void refuseChanges(Heap heap, String why) {
        heap.failed(new HtodException(why));
    }
}
