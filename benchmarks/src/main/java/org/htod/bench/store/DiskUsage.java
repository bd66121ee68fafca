package org.htod.bench.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Disk space of a store's directory, and its removal. */
public final class DiskUsage {

    private DiskUsage() {}

    /** Sum of {@code Files.size} over the regular files under {@code dir}: apparent sizes. */
    public static long apparentBytes(Path dir) {
        if (!Files.exists(dir)) {
            return 0;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(DiskUsage::sizeOrZero).sum();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot walk " + dir, e);
        }
    }

    /**
     * Bytes of the blocks allocated under {@code dir}, directories included, as {@code du -sk}
     * reports them (POSIX {@code du}; the JDK has no portable way to read {@code st_blocks}). This
     * is what a file per object really costs: every file takes whole blocks. Returns -1 when
     * {@code du} is not available.
     */
    public static long allocatedBytes(Path dir) {
        if (!Files.exists(dir)) {
            return 0;
        }
        try {
            Process du = new ProcessBuilder("du", "-sk", dir.toString()).redirectErrorStream(true).start();
            String out = new String(du.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!du.waitFor(60, TimeUnit.SECONDS) || du.exitValue() != 0) {
                return -1;
            }
            return Long.parseLong(out.split("\\s+")[0]) * 1024;
        } catch (IOException | NumberFormatException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * Forces every file and directory under {@code dir} to disk ({@code FileChannel.force}; on
     * Linux this also writes back pages a store changed through a memory mapping). Benchmarks call
     * it between phases so that one phase's write-back does not run into the next one's timing,
     * and {@link Drain} at the end of a timed pass. Returns how many files and directories it forced.
     */
    public static int syncRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return 0;
        }
        int forced = 0;
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                    ch.force(true);
                    forced++;
                } catch (NoSuchFileException e) {
                    // Removed while walking: nothing to force.
                }
            }
            return forced;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot sync " + dir, e);
        }
    }

    /** Deletes {@code dir} and everything under it; nothing when it does not exist. */
    public static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    private static long sizeOrZero(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            // A file removed while walking (a store's temporary file) takes no space.
            return 0;
        }
    }
}
