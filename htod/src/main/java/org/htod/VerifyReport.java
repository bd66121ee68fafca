package org.htod;

import java.util.List;

/**
 * What {@link HtodStore#verify()} found: the store's structure read whole and checked against
 * its invariants (every checksum, every chain, every count, every allocated block reached by a
 * map). Where {@link RecoveryReport} says what opening a store did, this says whether the store
 * is sound now.
 *
 * @param maps maps checked
 * @param entries entries reached from the maps
 * @param blocksReached heap blocks some structure of the maps reaches
 * @param blocksAllocated heap blocks allocated
 * @param problems what is wrong, empty when the store is sound
 */
public record VerifyReport(int maps, long entries, long blocksReached, long blocksAllocated, List<Problem> problems) {

    public VerifyReport {
        problems = List.copyOf(problems);
    }

    /** One violation: where it is (an absolute offset in the file or device, -1 if it has none) and what. */
    public record Problem(long offset, String message) {
        @Override
        public String toString() {
            return (offset >= 0 ? "at offset " + offset + ": " : "") + message;
        }
    }

    /** Whether the store is sound. */
    public boolean ok() {
        return problems.isEmpty();
    }

    @Override
    public String toString() {
        return ok() ? "sound: " + maps + " maps, " + entries + " entries, " + blocksReached + " blocks reached of "
                + blocksAllocated + " allocated" : problems.size() + " problem(s): " + problems;
    }
}
