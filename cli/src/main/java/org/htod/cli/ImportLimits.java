package org.htod.cli;

import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.StoreEntry;

/**
 * What one entry of the store an import writes into may take, so that the import's check refuses
 * an entry the store would refuse halfway through the load. A direct-mode store takes keys of up
 * to {@link Htod#MAX_KEY_BYTES} and values of up to {@link Htod#MAX_VALUE_BYTES}; in log mode key
 * and value share one log record as well. The library tells that record's size only as {@link
 * HtodStore#maxValueBytes()}, the value it holds beside a key of {@code MAX_KEY_BYTES}, so key and
 * value together may take that plus {@code MAX_KEY_BYTES}. Where that is 0 (a log too small for a
 * largest key) the record's size is not known, and only the load refuses what does not fit.
 */
final class ImportLimits {
    /** Most bytes of key and value together (log mode), else {@code Long.MAX_VALUE}. */
    private final long entryBytes;
    /** The log region's size (log mode), from which another is proposed. */
    private final long logBytes;
    /** Whether the import creates the store, whose options may then change. */
    private final boolean created;
    /** Most bytes of key and value of the entries refused for the log record; see {@link #remedy}. */
    private long largest;

    private ImportLimits(long entryBytes, long logBytes, boolean created) {
        this.entryBytes = entryBytes;
        this.logBytes = logBytes;
        this.created = created;
    }

    static ImportLimits of(HtodStore s, boolean created) {
        if (!s.logged()) {
            return new ImportLimits(Long.MAX_VALUE, 0, created);
        }
        long v = s.maxValueBytes();
        return new ImportLimits(v > 0 ? v + Htod.MAX_KEY_BYTES : Long.MAX_VALUE, s.stats().layout().logBytes(), created);
    }

    /** Why the store cannot take {@code e}, or null if it can. */
    String refusal(StoreEntry e) {
        int k = e.key().length;
        int v = e.value().length;
        if (k > Htod.MAX_KEY_BYTES) {
            return "a key of " + k + " bytes; a store takes keys of at most " + Htod.MAX_KEY_BYTES;
        }
        if (v > Htod.MAX_VALUE_BYTES) {
            return "a value of " + v + " bytes; a store takes values of at most " + Htod.MAX_VALUE_BYTES;
        }
        long both = (long) k + v;
        if (both > entryBytes) {
            largest = Math.max(largest, both);
            return "a value of " + v + " bytes under a key of " + k + " bytes; in log mode key and value go in one"
                    + " log record, which here holds at most " + entryBytes + " bytes of key and value";
        }
        return null;
    }

    /**
     * What to do about the entries {@link #refusal} refused: a new store in direct mode, or with
     * a log whose record holds the largest of them. A record is about an eighth of the log
     * region, less a fixed overhead; the size proposed keeps that overhead.
     */
    String remedy(java.nio.file.Path store) {
        if (largest == 0) {
            return "";
        }
        long overhead = Math.max(0, logBytes - 8 * entryBytes);
        long mib = 1 << 20;
        long log = (8 * largest + overhead + mib - 1) / mib * mib;
        String options = "--direct (no log: values of up to " + Htod.MAX_VALUE_BYTES + " bytes) or --log-size " + log
                + " (a log whose record holds the largest entry of the input)";
        return created ? "; import with " + options
                : "; " + store + " keeps the log it was created with: import into a new store, with " + options;
    }
}
