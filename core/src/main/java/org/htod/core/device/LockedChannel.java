package org.htod.core.device;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.htod.core.DeviceFailedException;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.htod.core.StoreLockedException;

/**
 * A channel on a store's file, held exclusively: claimed in this process before any descriptor
 * is opened (see {@link ProcessLocks}), then locked with a {@link FileLock} against other
 * processes. Shared by {@link FileDevice} and {@link RawDevice}, which differ only in how they
 * open the channel and transfer data; a device may open more channels on the file ({@link
 * #openExtra}: the file device's {@code O_DSYNC} one, and the read-only one its reads are mapped
 * through).
 *
 * <h2>Interrupts</h2>
 *
 * A {@code FileChannel} closes when a thread blocked in its I/O is interrupted, or when a thread
 * whose interrupt is pending begins some: that is how NIO works. Left so, one interrupted thread
 * (a cancelled task, an executor shut down) closed the store for every thread, which had to
 * reopen it. Every transfer therefore goes through {@link #call}: it clears a pending interrupt
 * before the I/O and sets it again after, so that the caller still sees it; and when the channel
 * was closed under it, by its own interrupt or another thread's, it opens the file again and
 * repeats the call. Positional reads and writes and {@code force} are idempotent, so a call
 * repeated from where its buffer stopped leaves what one call would have.
 *
 * <p>Closing any descriptor of a file drops the process's record locks on it (POSIX), so a
 * channel closed by an interrupt, any of them, dropped the file lock: {@link #reopen} takes it
 * again. If another process took it in between, or the file cannot be opened again, the device
 * stops: every call after that throws {@link StoreLockedException}.
 *
 * <p>Repeating a {@code force} is not as safe as repeating a transfer: Linux reports a write-back
 * error to each descriptor once, counted from when it was opened, and the JDK throws an
 * interrupt's exception in place of the error a {@code force} met. A channel opened again would
 * never hear of an error reported before (to the force the interrupt cut short, or to another
 * descriptor), and its sync would pass. So the device keeps one more descriptor, {@link #watch},
 * open from its open to its close and never reopened: after any reopen, the next {@link #sync}
 * syncs through it too, which reports every error since it last looked.
 */
final class LockedChannel {
    /** Reopens in a row, for one call, before it gives up: a thread interrupted without end. */
    private static final int MAX_REOPENS = 1000;

    /** The file's name: another after {@link #movedTo}. */
    private volatile Path path;
    /** How the channels are opened again: as at first, less anything that creates or truncates. */
    private final Set<OpenOption> reopenOptions;
    /** The options each of {@link #extras} was opened with, less creation. Guarded by this. */
    private final List<Set<OpenOption>> extraOptions = new ArrayList<>();
    private final boolean fileLock;
    /** A read-only channel takes a shared lock (the only kind it can): other readers may hold it too, no writer. */
    private final boolean sharedLock;
    private final Object processKey;
    private volatile FileChannel channel;
    /** The channels opened beside the main one ({@link #openExtra}), by number: replaced whole, under this. */
    private volatile FileChannel[] extras = new FileChannel[0];
    /** Guarded by this. */
    private FileLock lock;
    /** Why the device stopped: another process locked the file while an interrupt had dropped its lock. */
    private volatile String lost;
    private volatile boolean closed;
    private final AtomicLong reopens = new AtomicLong();
    /** See the class comment; closed only with the device, as closing it drops the lock. */
    private final java.io.RandomAccessFile watch;
    /** {@link #reopens} as of the last sync through {@link #watch}. Guarded by {@link #syncs}. */
    private long watched;
    /** Held through each {@link #sync}: see there. */
    private final Object syncs = new Object();
    /**
     * The first sync that failed, or null. Written under {@link #syncs}. A failed sync may have lost writes made before it: Linux
     * drops the pages whose write-back failed from the dirty ones and reports the error once to
     * each descriptor, so a sync after it passes without those writes on the disk. A store that
     * trusted it (retrying an install, logging a change again, taking a checkpoint) would name
     * data the disk does not hold. So every later sync fails with it, until the file is opened
     * again: the store must be reopened, and recovery replays the log.
     */
    private volatile HtodException syncFailed;

    /** How the file's channels are opened: {@link FileChannel#open(Path, Set, java.nio.file.attribute.FileAttribute[])}, or a test's. */
    interface Opener {
        FileChannel open(Path path, Set<? extends OpenOption> options) throws IOException;
    }

    private final Opener opener;

    /** A transfer on a channel, which {@link #call} may repeat, on another channel, from where it stopped. */
    interface Call<T> {
        T on(FileChannel ch) throws IOException;
    }

    private LockedChannel(Path path, Set<? extends OpenOption> options, FileChannel channel, FileLock lock,
            Object processKey, java.io.RandomAccessFile watch, Opener opener) {
        this.path = path;
        this.opener = opener;
        this.watch = watch;
        this.reopenOptions = withoutCreation(options);
        this.fileLock = lock != null;
        this.sharedLock = lock != null && lock.isShared();
        this.channel = channel;
        this.lock = lock;
        this.processKey = processKey;
    }

    private static Set<OpenOption> withoutCreation(Set<? extends OpenOption> options) {
        Set<OpenOption> s = new HashSet<>(options);
        s.remove(StandardOpenOption.CREATE);
        s.remove(StandardOpenOption.CREATE_NEW);
        s.remove(StandardOpenOption.TRUNCATE_EXISTING);
        return s;
    }

    /**
     * Opens {@code path} with {@code options}; with {@code fileLock}, also takes the FileLock (block
     * devices do without: their lock is not reliable, the in-process claim still applies).
     *
     * @param openFailure turns a failure to open into the device's own error
     */
    static LockedChannel open(Path path, Set<? extends OpenOption> options, boolean fileLock,
            Function<Exception, RuntimeException> openFailure) {
        return open(path, options, fileLock, openFailure, FileChannel::open);
    }

    /** {@link #open(Path, Set, boolean, Function)}, its channels opened by {@code opener}. */
    static LockedChannel open(Path path, Set<? extends OpenOption> options, boolean fileLock,
            Function<Exception, RuntimeException> openFailure, Opener opener) {
        // A file that does not exist yet has no identity to claim before the open that creates
        // it; so that no other open of the same file in this process claims it between that
        // open and the claim (and has its lock dropped by the descriptor a refused open closes),
        // each open looks, claims, and for a new file creates, under its path's opening lock.
        Claimed claimed = ProcessLocks.opening(path, () -> {
            if (Files.exists(path)) {
                return new Claimed(ProcessLocks.claim(path), null);
            }
            FileChannel created = openChannel(path, options, opener, openFailure, null);
            try {
                return new Claimed(ProcessLocks.claim(path), created);
            } catch (RuntimeException e) {
                closeQuietly(created);
                throw e;
            }
        });
        Object key = claimed.key();
        FileChannel ch = claimed.created() != null ? claimed.created() : openChannel(path, options, opener, openFailure, key);
        try {
            FileLock lock = null;
            if (fileLock) {
                try {
                    lock = ch.tryLock(0, Long.MAX_VALUE, !options.contains(StandardOpenOption.WRITE));
                } catch (OverlappingFileLockException e) {
                    lock = null;
                } catch (IOException e) {
                    throw new HtodIOException("cannot lock " + path, e);
                }
                if (lock == null) {
                    throw new StoreLockedException(path + " is locked by another open store, in this process or another");
                }
            }
            java.io.RandomAccessFile watch;
            try {
                watch = new java.io.RandomAccessFile(path.toFile(), "r"); // after the lock: the locked file's
            } catch (IOException e) {
                throw new HtodIOException("cannot open " + path + " to watch for write-back errors", e);
            }
            return new LockedChannel(path, options, ch, lock, key, watch, opener);
        } catch (RuntimeException e) {
            closeQuietly(ch);
            ProcessLocks.release(key);
            throw e;
        }
    }

    /** What an open claimed under its path's opening lock: the file's key, and the channel that created it, if it did. */
    private record Claimed(Object key, FileChannel created) {}

    /** Opens the device's channel; on failure releases {@code key} and throws the device's error. */
    private static FileChannel openChannel(Path path, Set<? extends OpenOption> options, Opener opener,
            Function<Exception, RuntimeException> openFailure, Object key) {
        try {
            return opener.open(path, options);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            ProcessLocks.release(key);
            throw openFailure.apply(e);
        }
    }

    /**
     * Opens one more channel on the file with {@code options}, after the lock is held, so that it
     * is the locked file's descriptor; returns its number, for {@link #extra} and {@link
     * #callExtra}. Closed with the device; reopened, as the main one is, once an interrupt closed
     * it (closing it dropped the lock), by the next call that finds it (or any other) closed, and
     * by a call that gives up after {@link #MAX_REOPENS}.
     */
    synchronized int openExtra(Set<OpenOption> options) throws IOException {
        FileChannel ch = opener.open(path, options);
        extraOptions.add(withoutCreation(options));
        FileChannel[] next = Arrays.copyOf(extras, extras.length + 1);
        next[next.length - 1] = ch;
        extras = next;
        return next.length - 1;
    }

    /**
     * The file was renamed to {@code to} (by its owner, while it held it): channels opened again
     * after an interrupt are opened by that name. The file, its lock and its claim are unchanged.
     */
    void movedTo(Path to) {
        path = to;
    }

    /** The channel now: another one after an interrupt closed it. */
    FileChannel channel() {
        return channel;
    }

    /** Extra channel {@code n} now (see {@link #openExtra}): another one after an interrupt closed it. */
    FileChannel extra(int n) {
        return extras[n];
    }

    /** The file's identity this process claimed it by (see {@link ProcessLocks#claim}); null where it claimed none. */
    Object processKey() {
        return processKey;
    }

    /** Times a channel was opened again after an interrupt closed it. */
    long reopens() {
        return reopens.get();
    }

    /** Runs {@code c} on the channel (see the class comment: interrupts neither close the device nor get lost). */
    <T> T call(Call<T> c) throws IOException {
        return call(-1, c);
    }

    /** {@link #call} on extra channel {@code n} (see {@link #openExtra}). */
    <T> T callExtra(int n, Call<T> c) throws IOException {
        return call(n, c);
    }

    /** {@link #call} on extra channel {@code extra}, or on the main one if it is -1. */
    private <T> T call(int extra, Call<T> c) throws IOException {
        boolean interrupted = Thread.interrupted(); // pending at the call, it would close the channel at once
        try {
            for (int reopened = 0; ; reopened++) {
                String why = lost;
                if (why != null) {
                    throw new StoreLockedException(why);
                }
                FileChannel ch = extra < 0 ? channel : extras[extra];
                try {
                    return c.on(ch);
                } catch (ClosedChannelException e) {
                    interrupted |= Thread.interrupted();
                    if (closed) {
                        throw e;
                    }
                    if (reopened >= MAX_REOPENS) {
                        // Given up, but not with a channel left closed and the file unlocked: a
                        // channel only some calls use (the mappings' read-only one) may not be
                        // called again for long.
                        try {
                            reopen(ch);
                        } catch (IOException | RuntimeException again) {
                            e.addSuppressed(again);
                        }
                        throw e;
                    }
                    try {
                        reopen(ch);
                    } catch (ClosedChannelException again) {
                        interrupted |= Thread.interrupted(); // an interrupt while reopening: once more
                    }
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Opens again whichever channel is closed, {@code broken} among them unless another thread
     * did so already, and takes the file lock again: the close dropped it.
     */
    private synchronized void reopen(FileChannel broken) throws IOException {
        FileChannel[] ex = extras;
        if (closed || lost != null || (broken != channel && !Arrays.asList(ex).contains(broken))) {
            return; // closed for good, or replaced meanwhile: the caller's loop decides
        }
        FileChannel main = channel;
        boolean mainClosed = !main.isOpen();
        // Which were closed, looked at once: a channel replaced must be one whose close this
        // waited for below. One that closes after this look stays in place, and its thread's
        // call, finding it closed, comes here again.
        boolean[] extraClosed = new boolean[ex.length];
        boolean anyClosed = mainClosed;
        for (int i = 0; i < ex.length; i++) {
            extraClosed[i] = !ex[i].isOpen();
            anyClosed |= extraClosed[i];
        }
        if (!anyClosed) {
            return;
        }
        // An interrupt's close runs in the interrupting thread, and a channel reads as closed
        // before the close is done. close() waits for it to end (the descriptor closed, the
        // JVM's record of the lock dropped): a lock taken before that, the close would drop again.
        if (mainClosed) {
            closeQuietly(main);
        }
        for (int i = 0; i < ex.length; i++) {
            if (extraClosed[i]) {
                closeQuietly(ex[i]);
            }
        }
        if (lock != null) {
            try {
                lock.release(); // the JVM's record of it, where its channel is open; the kernel's went with the descriptor
            } catch (IOException e) {
                // its channel is closed, which dropped the record already
            }
            lock = null;
        }
        try {
            if (mainClosed) {
                channel = opener.open(path, reopenOptions);
            }
            FileChannel[] reopened = ex.clone();
            try {
                for (int i = 0; i < ex.length; i++) {
                    if (extraClosed[i]) {
                        reopened[i] = opener.open(path, extraOptions.get(i));
                    }
                }
            } finally {
                extras = reopened; // those opened before a failure too, so that close() closes them
            }
            if (fileLock) {
                FileLock l;
                try {
                    l = channel.tryLock(0, Long.MAX_VALUE, sharedLock);
                } catch (OverlappingFileLockException e) {
                    l = null;
                }
                if (l == null) {
                    lost = "an interrupt closed " + path + ", which dropped its lock, and another store locked the file"
                            + " before it was opened again; close this store";
                    throw new StoreLockedException(lost);
                }
                lock = l;
            }
        } catch (ClosedChannelException e) {
            throw e; // interrupted again while locking: the caller's loop opens it once more
        } catch (IOException | RuntimeException e) {
            // Left half open, it would go on unlocked with nothing to lock it again.
            if (lost == null) {
                lost = "an interrupt closed " + path + ", which dropped its lock, and it could not be opened again"
                        + " with its lock (" + e + "); close this store";
            }
            throw e;
        }
        reopens.incrementAndGet();
    }

    /**
     * The typed error for an I/O failure on this file: a full disk or exhausted quota is {@link
     * StoreFullException}; a channel closed by the device's own close is {@link
     * StoreClosedException}; anything else is {@link HtodIOException}. Each names the file and
     * the operation.
     */
    RuntimeException error(String what, IOException e) {
        String msg = String.valueOf(e.getMessage());
        if (msg.contains("No space left on device") || msg.contains("Disk quota exceeded")) {
            return new StoreFullException(what + " on " + path + " failed: the disk is full", e);
        }
        if (e instanceof ClosedChannelException && closed) {
            return new StoreClosedException(what + " on " + path + " failed: the device was closed");
        }
        if (e instanceof ClosedByInterruptException) {
            return new HtodIOException(what + " on " + path + " was interrupted " + MAX_REOPENS + " times in a row", e);
        }
        return new HtodIOException(what + " on " + path + " failed", e);
    }

    /**
     * Makes the data written so far durable ({@code force(false)}: data, not metadata such as
     * times). Once a sync has failed, every later one fails too (see {@link #syncFailed}).
     */
    void sync() {
        // One sync at a time: of two forces under way together, the kernel reports a lost
        // write-back to one only, and the other, passing, would claim writes durable that the
        // first failed to make so (the log's sync for a placed value beside the flusher's).
        // Serialized, each looks at the latch first, and a failure is latched before the next.
        synchronized (syncs) {
            refuseIfFailed();
            try {
                call(ch -> {
                    ch.force(false);
                    return null;
                });
                long r = reopens.get();
                if (r != watched) {
                    watch.getFD().sync(); // not a channel's: no interrupt closes it
                    watched = r;
                }
            } catch (IOException e) {
                RuntimeException err = error("sync", e);
                if (err instanceof HtodException h && !(err instanceof StoreClosedException)
                        && !(e instanceof ClosedByInterruptException)) {
                    syncFailed = h;
                }
                throw err;
            }
        }
    }

    private void refuseIfFailed() {
        HtodException failed = syncFailed;
        if (failed != null) {
            throw new DeviceFailedException("sync on " + path + " refused: an earlier sync failed, so writes made before"
                    + " it may be lost, which no later sync would report; close the store and open it again, whose"
                    + " recovery replays the log", failed);
        }
    }

    /** Releases the lock, closes the channels, and gives up the claim. */
    synchronized void close() {
        closed = true;
        try {
            if (lock != null) {
                lock.release();
            }
        } catch (IOException e) {
            // Closing the channel releases the lock anyway.
        } finally {
            for (FileChannel e : extras) {
                closeQuietly(e);
            }
            closeQuietly(channel);
            try {
                watch.close();
            } catch (IOException suppressed) {
                // closing: nothing to report it to
            }
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
