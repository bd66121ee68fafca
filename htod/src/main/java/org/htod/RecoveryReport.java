package org.htod;

import java.time.Duration;

/**
 * What opening a store took and found: how the heap rebuilt its state (from the clean-shutdown
 * snapshot, or by the storage method's recovery after a crash) and, after a crash, what the
 * tables' recovery did.
 *
 * @param clean whether the store had been closed cleanly
 * @param heapPath how the store was opened: {@code "log"} (log mode: its checkpoint and the log), or
 *     in direct mode how the heap was: {@code "new"}, {@code "snapshot"}, {@code "scan"} or {@code "lists"}
 * @param heapTook time the heap took to open
 * @param heapHeadersRead block headers the heap read to recover
 * @param tablesTook time the tables' recovery took (zero after a clean close)
 * @param tables maps walked by the tables' recovery
 * @param entriesCounted entries found by the tables' recovery
 * @param leakedBlocksFreed allocated blocks no map reached (writes cut by the crash), freed
 * @param entriesRelinked entries an interrupted doubling had cut out of their chains, linked back
 * @param logBytesRead bytes of the log read to replay it (log mode)
 * @param logDataRecords records of changes replayed from the log (log mode)
 * @param logInstallRecords install records after the checkpoint redone (log mode)
 * @param changesBuffered changes put back into the write buffer, to be installed (log mode)
 * @param detail the heap's, the tables' and the log's own reports, in words
 */
public record RecoveryReport(
        boolean clean,
        String heapPath,
        Duration heapTook,
        long heapHeadersRead,
        Duration tablesTook,
        int tables,
        long entriesCounted,
        long leakedBlocksFreed,
        long entriesRelinked,
        long logBytesRead,
        long logDataRecords,
        long logInstallRecords,
        long changesBuffered,
        String detail) {

    /** Time to open, heap and tables together. */
    public Duration took() {
        return heapTook.plus(tablesTook);
    }

    @Override
    public String toString() {
        return detail;
    }
}
