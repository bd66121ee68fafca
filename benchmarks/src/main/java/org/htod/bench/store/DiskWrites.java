package org.htod.bench.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What the disk under a directory wrote, as the kernel counts it ({@code /proc/diskstats}): bytes
 * and write requests. A store's own count of what it asked to write misses what the page cache
 * makes of it: a write of 512 bytes into a page the disk has not seen since is a write of the
 * whole page when the kernel writes it back, and writes that land in the same page before then
 * are one. Counted around a trial on a quiet machine, these are each store's bytes at the disk,
 * its compactions and writeback included ({@link #settle} first writes back what the store left
 * in the cache).
 *
 * <p>Linux only: elsewhere, or where the directory's file system names no disk that {@code
 * /proc/diskstats} lists (a tmpfs, an overlay), {@link #under} finds none.
 */
public final class DiskWrites {
    private static final Path DISKSTATS = Path.of("/proc/diskstats");
    /** Bytes of a sector as {@code /proc/diskstats} counts them, whatever the disk's own. */
    private static final int SECTOR = 512;

    /** A reading: bytes written and write requests completed, since the machine started. */
    public record Count(long bytes, long writes) {
        /** What was written from {@code before} to this reading. */
        public Count since(Count before) {
            return new Count(bytes - before.bytes, writes - before.writes);
        }
    }

    private final String disk;

    private DiskWrites(String disk) {
        this.disk = disk;
    }

    /** The disk that holds {@code dir}, if {@code /proc/diskstats} lists it. */
    public static Optional<DiskWrites> under(Path dir) {
        try {
            if (!Files.isReadable(DISKSTATS)) {
                return Optional.empty();
            }
            String name = Files.getFileStore(dir).name(); // "/dev/vda1", "/dev/mapper/root", "overlay"
            Path dev = Path.of(name);
            if (!dev.isAbsolute() || !Files.exists(dev)) {
                return Optional.empty();
            }
            String disk = dev.toRealPath().getFileName().toString(); // a mapper's link names its dm-N
            DiskWrites d = new DiskWrites(disk);
            return d.read().isPresent() ? Optional.of(d) : Optional.empty();
        } catch (IOException | UncheckedIOException | SecurityException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** The disk's name in {@code /proc/diskstats} ("vda1", "dm-0"). */
    public String disk() {
        return disk;
    }

    /** The disk's writes so far, or empty if its line is gone. */
    public Optional<Count> read() {
        try {
            return parse(Files.readAllLines(DISKSTATS), disk);
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * The writes of {@code disk} in the lines of {@code /proc/diskstats}: fields 8 (writes
     * completed) and 10 (sectors written, of 512 bytes), counting from 1 as the kernel's
     * documentation does, where field 3 is the name.
     */
    public static Optional<Count> parse(List<String> lines, String disk) {
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 10 && f[2].equals(disk)) {
                return Optional.of(new Count(Long.parseLong(f[9]) * SECTOR, Long.parseLong(f[7])));
            }
        }
        return Optional.empty();
    }

    /**
     * Forces every regular file under {@code dir} to the disk, so that what a store left in the
     * page cache is counted with its trial, not with the next one.
     */
    public static void settle(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                try (FileChannel c = FileChannel.open(f, StandardOpenOption.READ)) {
                    c.force(true);
                } catch (IOException e) {
                    // a file the store removed meanwhile, or one not ours to open: nothing to settle
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // the directory is gone: nothing left to write back
        }
    }
}
