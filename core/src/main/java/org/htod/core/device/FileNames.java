package org.htod.core.device;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a new file takes its name, in the htod module's copies and compactions and in the tools
 * built on it: it is written under a {@linkplain #temporary temporary name} beside its target and
 * made durable, then given the target's name (linked, which refuses a target that exists, or
 * renamed, as {@link FileDevice#movedTo} does), and the directory is {@linkplain #syncDirectory
 * synced} so that the name survives a power loss. One definition of the temporary name, because
 * a store's open deletes what a killed process left under one beside it ({@link #isTemporary}).
 */
public final class FileNames {
    /** Between the target's name and the hexadecimal tail of a temporary name. */
    private static final String PARTIAL = ".partial-";

    private FileNames() {}

    /** A fresh temporary name beside {@code target}: {@code NAME.partial-HEX}. */
    public static Path temporary(Path target) {
        Path abs = target.toAbsolutePath();
        return abs.resolveSibling(abs.getFileName() + PARTIAL + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    }

    /** Whether {@code file}'s name is one {@link #temporary} gives beside {@code target}. */
    public static boolean isTemporary(Path target, Path file) {
        String prefix = target.toAbsolutePath().getFileName() + PARTIAL;
        String n = file.getFileName().toString();
        return n.startsWith(prefix) && n.length() > prefix.length()
                && n.substring(prefix.length()).chars().allMatch(c -> Character.digit(c, 16) >= 0);
    }

    /**
     * Syncs the directory {@code dir}: the names made, changed or removed in it survive a power
     * loss; before, a crash could bring an old name back or lose a new one.
     *
     * @throws IOException if the directory cannot be opened or synced, which some systems cannot
     *     do at all: each caller says what that leaves
     */
    public static void syncDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }
}
