package org.htod;

/**
 * Told how far long work has got: a copy, a compaction, a salvage. Called from the thread doing
 * the work, often; it should return quickly.
 */
@FunctionalInterface
public interface Progress {
    /** Reports nothing. */
    Progress NONE = (done, total) -> {};

    /**
     * {@code done} units of {@code total} (entries for a copy or compaction, bytes for a scan);
     * {@code total} is an estimate, -1 when unknown.
     */
    void step(long done, long total);
}
