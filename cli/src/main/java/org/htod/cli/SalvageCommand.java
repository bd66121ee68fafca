package org.htod.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import org.htod.CopyReport;
import org.htod.Htod;
import org.htod.core.StoreLockedException;
import org.htod.core.device.FileDevice;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "salvage", description = "Writes every readable entry of a damaged store into a new store, leaving the"
        + " damaged one untouched: a walk of its maps when it opens and verifies, else a scan of its heap block by block."
        + " A store open in this process or another is locked (exit 4).")
final class SalvageCommand implements Callable<Integer> {
    /** Bytes the copy of the damaged store reads at a time. */
    private static final int COPY_CHUNK = 4 << 20;

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
        // open, and writes, would be copied torn and salvaged with exit 0. So the tool opens the
        // file as a read-only device, under a shared lock that an open store's exclusive lock
        // refuses, and copies it while it holds it; the library salvages that copy. The device
        // cannot be held over Htod.salvage instead: its scan claims the file again, which this
        // process's own claim refuses.
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

    /**
     * The damaged store copied to {@code image} through a read-only device, which holds the file
     * under a shared lock until the copy is done. The device claims the file in this process
     * before it opens a descriptor, so a store open in this very process refuses it and keeps its
     * own lock; a plain channel, opened beside that store and closed, would drop the store's lock
     * (closing any descriptor of a file drops the process's locks on it).
     */
    private void snapshot(Path image) throws IOException {
        try (FileDevice in = openLocked();
                FileChannel out = FileChannel.open(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                Bar bar = Bar.of("read", "bytes", quiet)) {
            long size = in.size();
            ByteBuffer buf = ByteBuffer.allocateDirect((int) Math.max(1, Math.min(size, COPY_CHUNK)));
            for (long at = 0; at < size; ) {
                buf.clear().limit((int) Math.min(buf.capacity(), size - at));
                in.read(at, buf); // a file that ended early (shrunk by something that ignores the lock) throws
                buf.flip();
                at += buf.remaining();
                while (buf.hasRemaining()) {
                    out.write(buf);
                }
                bar.step(at, size);
            }
        }
    }

    /** The damaged store as a read-only device, under a shared lock. */
    private FileDevice openLocked() {
        try {
            return FileDevice.openReadOnly(store);
        } catch (StoreLockedException e) {
            throw new StoreLockedException(store + " is locked: a store has it open, in this process or another;"
                    + " salvage reads only a store nobody writes, so close that store first");
        }
    }

    /** {@code text} with the copy's name replaced by the damaged store's. */
    private String named(String text, Path image) {
        return text.replace(image.toString(), store.toString());
    }
}
