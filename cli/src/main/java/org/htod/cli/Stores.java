package org.htod.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.NotAStoreException;

/**
 * How the commands that only read a store open it: never creating one, in the mode it was last
 * opened in, read-only (the open's recovery and a verify write to memory only, so the file stays
 * as it was, a crash's evidence with it, and a file the tool may not write opens too).
 */
final class Stores {
    private Stores() {}

    /** Opens the store; a recovery, if it needs one, shows a progress bar on a terminal. */
    static HtodStore open(Path path) {
        return open(path, false);
    }

    /** {@link #open(Path)}; {@code quiet} keeps the recovery's bar off. */
    static HtodStore open(Path path, boolean quiet) {
        mustExist(path);
        // After an unclean shutdown an open replays the log or walks the whole store, which can
        // take a while; a clean open reports nothing, so no bar appears.
        try (Bar bar = Bar.of("recover", "", quiet)) {
            return Htod.builder(path).readOnly(true).modeAsStored(true).durability(Durability.SYNC).progress(bar).open();
        }
    }

    static void mustExist(Path path) {
        if (!Files.exists(path)) {
            throw new NotAStoreException(path + ": no such file");
        }
        if (Files.isDirectory(path)) {
            throw new NotAStoreException(path + " is a directory, not an htod store");
        }
    }

    static void mustNotExist(Path path) {
        if (Files.exists(path)) {
            throw new Exit.TargetExistsException(path + " exists: this command writes a new file and never overwrites one");
        }
    }
}
