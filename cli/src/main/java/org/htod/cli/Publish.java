package org.htod.cli;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How the tool puts a new file in place: written under a temporary name beside its target, made
 * durable, then linked to the target's name, which refuses a target that appeared meanwhile (a
 * rename would replace it silently), with the directory synced so that the name survives a power
 * loss. The library's copies do the same (its {@code StoreOps.publish}, not public).
 */
final class Publish {
    private Publish() {}

    /**
     * A fresh temporary name beside {@code target}: {@code NAME.partial-HEX}, the name the
     * library's copies use, so that the next open of a store {@code NAME} deletes one a killed
     * process left.
     */
    static Path temporary(Path target) {
        Path abs = target.toAbsolutePath();
        return abs.resolveSibling(abs.getFileName() + ".partial-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    }

    /** Fails, naming {@code target}, if the directory it would be written in does not exist. */
    static void mustHaveDirectory(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) {
            throw new IOException("cannot create " + target + ": " + (Files.exists(dir) ? dir + " is not a directory"
                    : "no directory " + dir));
        }
    }

    /**
     * Gives the complete, durable file {@code tmp} the name {@code target}, which must not exist;
     * {@code tmp}'s name is gone afterwards.
     *
     * @throws Exit.TargetExistsException if {@code target} exists
     */
    static void publish(Path tmp, Path target) throws IOException {
        try {
            Files.createLink(target, tmp);
        } catch (FileAlreadyExistsException e) {
            throw new Exit.TargetExistsException(target + " appeared while this command ran, and is not overwritten;"
                    + " what was written is discarded");
        }
        Files.delete(tmp);
        Path dir = target.toAbsolutePath().getParent();
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // Some systems cannot open or sync a directory; the file itself is durable.
        }
    }
}
