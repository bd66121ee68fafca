package org.htod.core.alloc;

import java.time.Duration;

/**
 * What opening a heap took and found. {@code path} says how the in-memory state was rebuilt:
 * {@code "snapshot"} after a clean close, {@code "scan"} (every header, the TS method and the
 * fallback of the others), {@code "lists"} (the PL/PFL disk lists plus a walk from the tail
 * checkpoint; the free blocks then taken from a scan of every header as the open finishes,
 * its own counted here if it made one), or {@code "new"} for a heap just created.
 */
public record HeapRecoveryReport(
        String path,
        Duration took,
        long headersRead,
        long bytesRead,
        long freeBlocksFound,
        long allocatedBlocksSkippedOnFreeLists,
        long headersRepaired,
        long tailBlocksRecovered,
        String fallbackReason) {

    public boolean wasClean() {
        return path.equals("snapshot") || path.equals("new");
    }

    @Override
    public String toString() {
        return "recovery by " + path + " in " + took.toMillis() + " ms: " + headersRead + " headers read ("
                + bytesRead + " bytes), " + freeBlocksFound + " free blocks, " + headersRepaired + " headers repaired, "
                + tailBlocksRecovered + " blocks found past the tail checkpoint, "
                + allocatedBlocksSkippedOnFreeLists + " allocated blocks removed from free lists"
                + (fallbackReason == null ? "" : "; fell back to a scan because " + fallbackReason);
    }
}
