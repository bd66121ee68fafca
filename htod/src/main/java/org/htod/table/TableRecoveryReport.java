package org.htod.table;

import java.time.Duration;

/**
 * What the tables' recovery found and did after an unclean shutdown in direct mode (see {@link
 * TableRecovery}). The layer-prefixed name keeps it apart from the heap's {@code
 * HeapRecoveryReport} below it and the store's public {@code org.htod.RecoveryReport} above it.
 */
public record TableRecoveryReport(Duration took, int tables, long entries, long leakedBlocksFreed, long entriesRelinked,
        long bucketsRepaired, long staleEntriesUnlinked) {

    @Override
    public String toString() {
        return "table recovery in " + took.toMillis() + " ms: " + tables + " tables, " + entries + " entries counted, "
                + leakedBlocksFreed + " leaked blocks freed, " + entriesRelinked + " entries relinked in "
                + bucketsRepaired + " buckets of an interrupted doubling, " + staleEntriesUnlinked
                + " stale entries of keys met twice unlinked";
    }
}
