package org.htod.cli;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import org.htod.CopyReport;
import org.htod.Htod;
import org.htod.core.StoreLockedException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "salvage", description = "Writes every readable entry of a damaged store into a new store, leaving the"
        + " damaged one untouched: a walk of its maps when it opens and verifies, else a scan of its heap block by block."
        + " A store open in another process is locked (exit 4).")
final class SalvageCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the damaged store file")
    Path store;

    @Parameters(index = "1", description = "the new store file (must not exist)")
    Path target;

    @Option(names = "--quiet", description = "no progress bar")
    boolean quiet;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        Stores.mustExist(store);
        Stores.mustNotExist(target);
        Publish.mustHaveDirectory(target);
        // Htod.salvage copies the damaged file without its lock, so a store another process has
        // open, and writes, would be copied torn and salvaged with exit 0. So the tool takes a
        // shared lock, which an open store's exclusive lock refuses, and copies the file itself
        // while it holds it; the library salvages that copy. The lock cannot be held over
        // Htod.salvage instead: its scan locks the file again, which this process's own lock
        // refuses (and on Linux closing any other descriptor of the file drops the lock).
        Path image = Publish.temporary(target);
        try {
            snapshot(image);
            CopyReport r;
            try (Bar bar = Bar.of("salvage", "", quiet)) {
                r = Htod.salvage(image, target, bar);
            } catch (RuntimeException e) {
                throw new RuntimeException(named(Exit.message(e), image), e); // the exit code is the cause's
            }
            // The copy is the damaged file byte for byte: its offsets are the damaged file's.
            spec.commandLine().getOut().println(named(r.toString(), image));
        } finally {
            Files.deleteIfExists(image);
        }
        return Exit.OK.code;
    }

    /** The damaged store copied to {@code image} under a shared lock on it, read through the locked channel only. */
    private void snapshot(Path image) throws IOException {
        try (FileChannel in = FileChannel.open(store, StandardOpenOption.READ)) {
            FileLock lock;
            try {
                lock = in.tryLock(0, Long.MAX_VALUE, true);
            } catch (OverlappingFileLockException e) {
                lock = null; // a store open in this very process
            }
            if (lock == null) {
                throw new StoreLockedException(store + " is locked: a store has it open (in another process?); salvage"
                        + " reads only a store nobody writes, so close that store first");
            }
            try (FileChannel out = FileChannel.open(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                    Bar bar = Bar.of("read", "bytes", quiet)) {
                long size = in.size();
                for (long at = 0, n = 1; at < size && n > 0; at += n) {
                    n = in.transferTo(at, Math.min(size - at, 64L << 20), out); // 0: the file ended early
                    bar.step(at + n, size);
                }
            } finally {
                lock.release();
            }
        }
    }

    /** {@code text} with the copy's name replaced by the damaged store's. */
    private String named(String text, Path image) {
        return text.replace(image.toString(), store.toString());
    }
}
