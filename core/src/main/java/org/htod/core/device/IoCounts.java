package org.htod.core.device;

/**
 * I/O counted by a {@link CountingDevice}. {@code seekDistance} is the sum, over consecutive
 * requests, of the distance between where one ended and where the next began: a proxy for head
 * movement on a disk.
 */
public record IoCounts(long reads, long writes, long bytesRead, long bytesWritten, long syncs, long seekDistance) {

    public IoCounts minus(IoCounts earlier) {
        return new IoCounts(reads - earlier.reads, writes - earlier.writes, bytesRead - earlier.bytesRead,
                bytesWritten - earlier.bytesWritten, syncs - earlier.syncs, seekDistance - earlier.seekDistance);
    }
}
