package org.htod.core.device;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.Set;
import java.util.function.Function;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;
import org.htod.core.StoreLockedException;

/**
 * A channel on a store's file, held exclusively: claimed in this process before any descriptor
 * is opened (see {@link ProcessLocks}), then locked with a {@link FileLock} against other
 * processes. Shared by {@link FileDevice} and {@link RawDevice}, which differ only in how they
 * open the channel and transfer data.
 */
final class LockedChannel {
    final FileChannel channel;
    private final Path path;
    private final FileLock lock;
    private final Object processKey;

    private LockedChannel(Path path, FileChannel channel, FileLock lock, Object processKey) {
        this.path = path;
        this.channel = channel;
        this.lock = lock;
        this.processKey = processKey;
    }

    /**
     * Opens {@code path} with {@code options}; with {@code fileLock}, also takes the FileLock (block
     * devices do without: their lock is not reliable, the in-process claim still applies).
     *
     * @param openFailure turns a failure to open into the device's own error
     */
    static LockedChannel open(Path path, Set<? extends OpenOption> options, boolean fileLock,
            Function<Exception, RuntimeException> openFailure) {
        boolean existed = Files.exists(path);
        Object key = existed ? ProcessLocks.claim(path) : null;
        FileChannel ch;
        try {
            ch = FileChannel.open(path, options);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            ProcessLocks.release(key);
            throw openFailure.apply(e);
        }
        try {
            if (!existed) {
                key = ProcessLocks.claim(path);
            }
            FileLock lock = null;
            if (fileLock) {
                try {
                    lock = ch.tryLock();
                } catch (OverlappingFileLockException e) {
                    lock = null;
                } catch (IOException e) {
                    throw new HtodIOException("cannot lock " + path, e);
                }
                if (lock == null) {
                    throw new StoreLockedException(path + " is locked by another open store, in this process or another");
                }
            }
            return new LockedChannel(path, ch, lock, key);
        } catch (RuntimeException e) {
            closeQuietly(ch);
            ProcessLocks.release(key);
            throw e;
        }
    }

    /**
     * The typed error for an I/O failure on this file: a full disk or exhausted quota is {@link
     * StoreFullException}; an interrupt, which closes the channel, says the store must be
     * reopened; anything else is {@link HtodIOException}. Each names the file and the operation.
     */
    RuntimeException error(String what, IOException e) {
        String msg = String.valueOf(e.getMessage());
        if (msg.contains("No space left on device") || msg.contains("Disk quota exceeded")) {
            return new StoreFullException(what + " on " + path + " failed: the disk is full", e);
        }
        if (e instanceof ClosedByInterruptException) {
            return new HtodIOException(what + " on " + path + " was interrupted, which closed the file; reopen the store", e);
        }
        return new HtodIOException(what + " on " + path + " failed", e);
    }

    /** Makes the data written so far durable ({@code force(false)}: data, not metadata such as times). */
    void sync() {
        try {
            channel.force(false);
        } catch (IOException e) {
            throw error("sync", e);
        }
    }

    /** Releases the lock, closes the channel, and gives up the claim. */
    void close() {
        try {
            if (lock != null) {
                lock.release();
            }
        } catch (IOException e) {
            // Closing the channel releases the lock anyway.
        } finally {
            closeQuietly(channel);
            ProcessLocks.release(processKey);
        }
    }

    static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException suppressed) {
            // The caller is already reporting an error or closing; this one adds nothing.
        }
    }
}
