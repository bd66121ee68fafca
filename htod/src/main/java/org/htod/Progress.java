package org.htod;

/**
 * Told how far long work has got: a copy, a compaction, a salvage, a verification, the recovery
 * of an open. Called from the thread doing the work every few hundred or thousand units; it
 * should return quickly.
 */
@FunctionalInterface
public interface Progress {
    /** Reports nothing. */
    Progress NONE = (done, total) -> {};

    /**
     * {@code done} units of {@code total} (entries for a copy or compaction, bytes for a scan or a
     * log replay, blocks for a verification or a direct-mode recovery); {@code total} is an
     * estimate, -1 when unknown.
     */
    void step(long done, long total);
}
