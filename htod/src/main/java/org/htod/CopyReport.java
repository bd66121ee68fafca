package org.htod;

import java.nio.file.Path;

/**
 * What a copy ({@link HtodStore#copyTo}), a compaction ({@link Htod#compact}, {@link
 * HtodStore#compact}) or a salvage ({@link Htod#salvage}) wrote.
 *
 * @param target the store written
 * @param maps maps written
 * @param entries entries written
 * @param sourceBytes bytes of the source store's file
 * @param targetBytes bytes of the store written
 * @param method how the entries were read: {@code "snapshot"} (an open store's consistent view),
 *     {@code "walk"} (every map of a store that opened and read whole), {@code "scan"} (the
 *     heap read block by block, for a store too damaged for a walk), or {@code "online"} (an
 *     open store's consistent view and the writes made meanwhile, swapped in)
 * @param unreadableBytes bytes a scan stepped over because no sound block started there; 0 otherwise
 * @param firstUnreadable offset of the first of those bytes, -1 if none
 * @param note why a salvage fell back to a scan; for an online compaction, the keys carried over
 *     and how long operations were held off; or null
 */
public record CopyReport(Path target, int maps, long entries, long sourceBytes, long targetBytes, String method,
        long unreadableBytes, long firstUnreadable, String note) {

    @Override
    public String toString() {
        return entries + " entries of " + maps + " maps into " + target + " by " + method + ": " + sourceBytes
                + " bytes before, " + targetBytes + " after" + (unreadableBytes > 0 ? "; " + unreadableBytes
                        + " unreadable bytes from offset " + firstUnreadable : "") + (note == null ? "" : "; " + note);
    }
}
