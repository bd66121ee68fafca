package org.htod.core.device;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.htod.core.HtodIOException;
import org.htod.core.StoreLockedException;

/**
 * The files this process has open as devices. A {@code FileLock} keeps other processes out, but
 * on Linux closing <em>any</em> descriptor of a file drops the process's lock on it: a second open
 * in this process that were refused only after opening a channel would, by closing that channel,
 * unlock the first. So a second open in this process is refused here, before any descriptor exists.
 */
final class ProcessLocks {
    private static final Set<Object> HELD = ConcurrentHashMap.newKeySet();
    /** The lock of each path an open is in (see {@link #opening}), with how many opens hold or wait for it. */
    private static final ConcurrentHashMap<Path, Opening> OPENING = new ConcurrentHashMap<>();

    /** A path's opening lock; {@code users} changes only inside the map's compute for its path. */
    private static final class Opening {
        int users;
    }

    private ProcessLocks() {}

    /** Claims {@code path} for this process, or throws; returns the key to release. */
    static Object claim(Path path) {
        Object key = identity(path);
        if (key != null && !HELD.add(key)) {
            throw new StoreLockedException(path + " is locked by another open store in this process");
        }
        return key;
    }

    /**
     * Runs {@code open} holding {@code path}'s opening lock: an open holds it from its look at
     * whether the file exists to its claim (see {@code LockedChannel.open}). One lock a path, so that an open that hangs (a file system that
     * does not answer) holds up the opens of that path only. Two names of one file (a link) each
     * have their own; the race it closes needs two opens creating the file at once, by the same name.
     */
    static <T> T opening(Path path, java.util.function.Supplier<T> open) {
        Path key = path.toAbsolutePath().normalize();
        Opening lock = OPENING.compute(key, (k, o) -> {
            Opening l = o == null ? new Opening() : o;
            l.users++;
            return l;
        });
        try {
            synchronized (lock) {
                return open.get();
            }
        } finally {
            // Gone with its last user: one kept for every path ever opened (every temporary name
            // a copy used) grew without end.
            OPENING.computeIfPresent(key, (k, o) -> --o.users == 0 ? null : o);
        }
    }

    /** Paths with an opening lock now: for tests. */
    static int openingPaths() {
        return OPENING.size();
    }

    static void release(Object key) {
        if (key != null) {
            HELD.remove(key);
        }
    }

    /** The file's identity (device and inode where the platform has them), or null if it does not exist. */
    static Object identity(Path path) {
        if (!Files.exists(path)) {
            return null;
        }
        try {
            Object k = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
            return k != null ? k : path.toRealPath();
        } catch (IOException e) {
            throw new HtodIOException("cannot read the identity of " + path, e);
        }
    }
}
