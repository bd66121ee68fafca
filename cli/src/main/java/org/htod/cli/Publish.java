package org.htod.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.htod.core.device.FileNames;

/**
 * How the tool puts a new file in place: written under a temporary name beside its target, made
 * durable, then linked to the target's name, which refuses a target that appeared meanwhile (a
 * rename would replace it silently), with the directory synced so that the name survives a power
 * loss: as the library's copies do, with its temporary names and its directory sync ({@link
 * FileNames}). On a file system without hard links (FAT and exFAT, many FUSE mounts) the file is
 * renamed into place instead, after a look that the target is absent, where the library's copies
 * fail.
 */
final class Publish {
    private Publish() {}

    /**
     * A fresh temporary name beside {@code target}: {@code NAME.partial-HEX}, the name the
     * library's copies use, so that the next open of a store {@code NAME} deletes one a killed
     * process left.
     */
    static Path temporary(Path target) {
        return FileNames.temporary(target);
    }

    /** Fails, naming {@code target}, if the directory it would be written in does not exist. */
    static void mustHaveDirectory(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) {
            throw new IOException("cannot create " + target + ": " + (Files.exists(dir) ? dir + " is not a directory"
                    : "no directory " + dir));
        }
    }

    /** Gives the existing file {@code existing} the second name {@code link}, as {@link Files#createLink} does. */
    @FunctionalInterface
    interface Linker {
        void link(Path link, Path existing) throws IOException;
    }

    /**
     * Gives the complete, durable file {@code tmp} the name {@code target}, which must not exist;
     * {@code tmp}'s name is gone afterwards.
     *
     * @throws Exit.TargetExistsException if {@code target} exists
     */
    static void publish(Path tmp, Path target) throws IOException {
        publish(tmp, target, Files::createLink);
    }

    /** {@link #publish(Path, Path)}, the link made by {@code linker}: for tests of a file system without hard links. */
    static void publish(Path tmp, Path target, Linker linker) throws IOException {
        boolean linked;
        try {
            linker.link(target, tmp);
            linked = true;
        } catch (FileAlreadyExistsException e) {
            throw appeared(target);
        } catch (UnsupportedOperationException | FileSystemException e) {
            // No hard links here (EPERM on FAT and exFAT, EOPNOTSUPP or ENOSYS on many FUSE
            // mounts): failing would throw away the whole file just written, so it is renamed
            // into place instead. A rename replaces a target, so the target is looked for first;
            // one that appears between the look and the rename is replaced, a race the link
            // closes and this cannot.
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                throw appeared(target);
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException | RuntimeException again) {
                again.addSuppressed(e);
                throw again;
            }
            linked = false;
        }
        if (linked) {
            Files.delete(tmp);
        }
        try {
            FileNames.syncDirectory(target.toAbsolutePath().getParent());
        } catch (IOException e) {
            // Some systems cannot open or sync a directory; the file itself is durable.
        }
    }

    private static Exit.TargetExistsException appeared(Path target) {
        return new Exit.TargetExistsException(target + " appeared while this command ran, and is not overwritten;"
                + " what was written is discarded");
    }
}
