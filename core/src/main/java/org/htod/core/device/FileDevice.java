package org.htod.core.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;

/**
 * A store in one file, through a {@link FileChannel}: positional reads and writes, {@code
 * force(false)} for sync (data, not metadata such as the modification time), a second descriptor
 * opened {@code O_DSYNC} for {@link #writeDurable}, reads served from memory mappings of the file
 * where they can ({@code MappedReads}, made through a descriptor of their own, opened read-only;
 * an option, on by default), and an exclusive {@link
 * FileLock} held while open, so that no second store, in this process or another, opens the same
 * file. A second open in this process is refused before it opens a descriptor, since
 * closing one would drop the first open's lock (see {@code ProcessLocks}).
 *
 * <p>A thread interrupted during I/O closes a {@code FileChannel} (that is how NIO works): the
 * device opens the file again, takes its lock again, and repeats the transfer; the thread's
 * interrupt is kept for it (see {@code LockedChannel}).
 */
public final class FileDevice implements BlockDevice {
    /** The file's name: another after {@link #movedTo}. */
    private volatile Path path;
    /**
     * The file's channel, another descriptor on the same file, opened {@code O_DSYNC}, for
     * {@link #writeDurable} (a write through it waits for its own pages only, where {@code force}
     * writes back every dirty page of the file), and with mapped reads one more, read-only, that
     * the mappings are made through ({@code MappedReads}). They need no lock of their own (the
     * file lock is the process's); closing one would drop that lock, so they are closed only with
     * the device (or by an interrupt, after which the lock is taken again).
     */
    private final LockedChannel held;
    /** The number of the {@code O_DSYNC} channel among {@link #held}'s extra ones: the first opened. */
    private static final int DURABLE = 0;
    private final long capacity;
    private final int sectorSize;
    /** Reads served from mappings of the file, or null where reads all go through the channel. */
    private final MappedReads mapped;
    /** Opened by {@link #openReadOnly}: reads only, under a shared lock. */
    private final boolean readOnly;
    /** Opened by {@link #openReadOnly}: the channel it shares with the other read-only opens of its file; else null. */
    private final Reader reader;
    private volatile boolean closed;

    /**
     * The read-only opens of each file in this process, by the file's identity (see {@code
     * ProcessLocks}): they share one {@link LockedChannel}, and its shared lock, closed with the
     * last of them. Each with a channel of its own, the second was refused (the file is claimed
     * once in a process, and the JVM holds one lock of a file at a time), and had it been let in,
     * closing either's descriptors dropped the process's lock for both (POSIX), letting a writer
     * in under the other. Guarded by itself.
     */
    private static final java.util.Map<Object, Reader> READERS = new java.util.HashMap<>();

    /** A file's read-only channel, and how many read-only opens use it. Guarded by {@link #READERS}. */
    private static final class Reader {
        final Object key;
        final LockedChannel held;
        int users;

        Reader(Object key, LockedChannel held) {
            this.key = key;
            this.held = held;
        }
    }

    private FileDevice(Path path, LockedChannel held, long capacity, int sectorSize, MappedReads mapped, boolean readOnly,
            Reader reader) {
        this.path = path;
        this.held = held;
        this.capacity = capacity;
        this.sectorSize = sectorSize;
        this.mapped = mapped;
        this.readOnly = readOnly;
        this.reader = reader;
    }

    /**
     * Opens the existing file {@code path} to read only, through a read-only descriptor (a file
     * the process may not write, on a read-only mount, say), under a shared lock: a store open in
     * another process, which holds the exclusive lock, refuses it, and it refuses such a store,
     * while other read-only opens may share the file, in this process too (where they share one
     * channel, and its lock, released with the last of them). Writes throw; sync does nothing.
     * Reads are not mapped.
     *
     * @throws org.htod.core.StoreLockedException if a store has the file open
     */
    public static FileDevice openReadOnly(Path path) {
        synchronized (READERS) {
            Object key = ProcessLocks.identity(path);
            Reader r = key == null ? null : READERS.get(key);
            if (r == null) {
                LockedChannel held = LockedChannel.open(path, java.util.Set.of(StandardOpenOption.READ), true,
                        e -> new HtodIOException("cannot open " + path + " to read",
                                e instanceof IOException io ? io : new IOException(e)),
                        FileChannel::open);
                r = new Reader(held.processKey(), held);
                if (r.key != null) {
                    READERS.put(r.key, r);
                }
            }
            r.users++;
            return new FileDevice(path, r.held, Long.MAX_VALUE, 512, null, true, r);
        }
    }

    /** Opens or creates {@code path}, locked, with no size limit but the file system's, 512-byte sectors and mapped reads. */
    public static FileDevice open(Path path) {
        return open(path, Long.MAX_VALUE, 512, true);
    }

    /** {@link #open(Path, long, int, boolean)} with mapped reads. */
    public static FileDevice open(Path path, long capacity, int sectorSize) {
        return open(path, capacity, sectorSize, true);
    }

    /**
     * Opens or creates {@code path}, locked exclusively.
     *
     * @param capacity most bytes the file may grow to; writes beyond fail with {@link StoreFullException}
     * @param sectorSize unit of atomic writes assumed by the layers above (a power of two)
     * @param mapReads whether reads are served from memory mappings of the file where they can
     *     (see {@code MappedReads}): no system call per read, while the file is at most half the
     *     memory; unmapped at close; on Java 17 to 23
     * @throws StoreLockedException if another open device holds the file
     */
    public static FileDevice open(Path path, long capacity, int sectorSize, boolean mapReads) {
        return open(path, capacity, sectorSize, mapReads, FileChannel::open);
    }

    /** {@link #open(Path, long, int, boolean)}, the file's channels opened by {@code opener}: for tests. */
    static FileDevice open(Path path, long capacity, int sectorSize, boolean mapReads, LockedChannel.Opener opener) {
        if (sectorSize <= 0 || Integer.bitCount(sectorSize) != 1) {
            throw new IllegalArgumentException("sector size must be a power of two, got " + sectorSize);
        }
        LockedChannel held = LockedChannel.open(path,
                java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE), true,
                e -> new HtodIOException("cannot open " + path, e instanceof IOException io ? io : new IOException(e)),
                opener);
        try {
            int durable = held.openExtra(java.util.Set.of(StandardOpenOption.WRITE, StandardOpenOption.DSYNC));
            if (durable != DURABLE) {
                throw new IllegalStateException("the O_DSYNC channel is extra channel " + durable + ", not " + DURABLE);
            }
        } catch (IOException | RuntimeException e) {
            held.close();
            throw new HtodIOException("cannot open " + path + " for synchronous writes",
                    e instanceof IOException io ? io : new IOException(e));
        }
        MappedReads mapped = null;
        if (mapReads && MappedReads.supported()) {
            try {
                int readOnly = held.openExtra(java.util.Set.of(StandardOpenOption.READ));
                mapped = new MappedReads((pos, size) -> held.callExtra(readOnly,
                        ch -> ch.map(FileChannel.MapMode.READ_ONLY, pos, size)), held.call(FileChannel::size),
                        MappedReads.limitFor());
            } catch (IOException | RuntimeException e) {
                held.close();
                throw new HtodIOException("cannot open " + path + " read-only for its mappings, or find its size",
                        e instanceof IOException io ? io : new IOException(e));
            }
        }
        return new FileDevice(path, held, capacity, sectorSize, mapped, false, null);
    }


    @Override
    public void read(long pos, ByteBuffer dst) {
        ensureOpen();
        int len = dst.remaining();
        if (pos < 0) {
            throw new HtodIOException("read of " + len + " bytes at negative offset " + pos + " of " + path,
                    new java.io.EOFException());
        }
        if (mapped != null && mapped.read(pos, dst)) {
            return;
        }
        // The end of the file is found by the read itself: asking the size first would cost a
        // system call on every read.
        try {
            int start = dst.position();
            while (dst.hasRemaining()) {
                // At the buffer's position, which a read an interrupt cut short may have moved
                // (the call is then repeated, from there too).
                long at = pos + dst.position() - start;
                int n = held.call(ch -> ch.read(dst, pos + dst.position() - start));
                if (n < 0) {
                    long size = held.call(FileChannel::size);
                    throw new HtodIOException("read of " + len + " bytes at offset " + pos + " past the end of " + path
                            + " (size " + size + ")", new java.io.EOFException("end of file at " + at));
                }
            }
        } catch (IOException e) {
            throw held.error("read of " + len + " bytes at offset " + pos, e);
        }
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        writeAll(false, "write", pos, src);
    }

    @Override
    public void sync() {
        ensureOpen();
        if (!readOnly) { // nothing written to make durable
            held.sync();
        }
    }

    /** Through the {@code O_DSYNC} descriptor: durable when it returns, without a {@code force} of the whole file. */
    @Override
    public void writeDurable(long pos, ByteBuffer src) {
        writeAll(true, "synchronous write", pos, src);
    }

    /**
     * A write through the page cache never crosses a multiple of this many bytes in one call.
     *
     * <p>Why: recent Linux kernels (the development machine's 6.18 with ext4; XFS for longer) give
     * a file's page cache folios as large as the write that creates them, up to 2 MiB, and every
     * later write into a folio, however small, walks all of its 4 KiB blocks. An install writes
     * its new entries in runs of megabytes, then links of 8 bytes into those pages: there, 100,000
     * writes of 8 bytes into a file written in 1 MiB pieces took 2.5 to 2.9 s, against 0.4 to 0.5
     * s into one written in 4 KiB or 64 KiB pieces; the flusher of a proxy replacement pass spent
     * a fifth of its processor time in that walk. 64 KiB pieces keep folios that small and cost a
     * system call per 64 KiB. Durable writes ({@code O_DSYNC}) stay whole: each call would be a
     * sync of its own, and they land on pages the log's earlier laps created.
     */
    static final int PIECE = 64 * 1024;

    /** Where a write through the page cache starting at {@code at} ends its call: at {@code end} or the next multiple of {@link #PIECE}. */
    static long pieceEnd(long at, long end) {
        return Math.min(end, (at / PIECE + 1) * PIECE);
    }

    private void writeAll(boolean durable, String what, long pos, ByteBuffer src) {
        ensureOpen();
        int len = src.remaining();
        if (readOnly) {
            throw new HtodIOException(what + " of " + len + " bytes at offset " + pos + " of " + path
                    + ", which is open read-only", new IOException("opened read-only"));
        }
        if (pos < 0 || pos > capacity - len) {
            throw new StoreFullException(what + " of " + len + " bytes at offset " + pos + " exceeds the capacity "
                    + capacity + " of " + path);
        }
        int limit = src.limit();
        int start = src.position();
        long end = pos + len;
        try {
            while (src.position() - start < len) {
                // At the buffer's position, which a write an interrupt cut short may have moved
                // (the call is then repeated, from there too).
                long at = pos + src.position() - start;
                if (durable) {
                    held.callExtra(DURABLE, ch -> ch.write(src, pos + src.position() - start));
                } else {
                    src.limit(src.position() + (int) (pieceEnd(at, end) - at));
                    held.call(ch -> ch.write(src, pos + src.position() - start));
                }
            }
            if (mapped != null) {
                mapped.grew(end);
            }
        } catch (IOException e) {
            throw held.error(what + " of " + len + " bytes at offset " + pos, e);
        } finally {
            src.limit(limit);
        }
    }

    @Override
    public long size() {
        ensureOpen();
        try {
            return held.call(FileChannel::size);
        } catch (IOException e) {
            throw held.error("size", e);
        }
    }

    /** Bytes of the file its read mappings cover now; 0 where reads are not mapped or once closed. */
    long mappedBytes() {
        return mapped == null ? 0 : mapped.mappedBytes();
    }

    @Override
    public long capacity() {
        return capacity;
    }

    @Override
    public int sectorSize() {
        return sectorSize;
    }

    @Override
    public String name() {
        return path.toString();
    }

    public Path path() {
        return path;
    }

    /**
     * Renames the open file to {@code to}, replacing what that name held, atomically, and the
     * directory synced: the file stays open and locked throughout, so that no other open takes it
     * between a close and a rename, or between the rename and an open (an online compaction's
     * new file takes its store's name so).
     *
     * @throws HtodIOException if the rename fails; the file keeps its name then
     */
    public synchronized void movedTo(Path to) {
        ensureOpen();
        try {
            java.nio.file.Files.move(path, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new HtodIOException("cannot rename " + path + " to " + to + ": " + e.getMessage(), e);
        }
        path = to;
        held.movedTo(to);
        Path dir = to.toAbsolutePath().getParent();
        try {
            FileNames.syncDirectory(dir); // the new name durable: a crash after a swap must not bring the old file back
        } catch (IOException e) {
            // Renamed all the same, and in use under the new name: said loudly, as a crash could
            // bring the old name's file back (some file systems cannot sync a directory at all).
            System.getLogger(FileDevice.class.getName()).log(System.Logger.Level.WARNING,
                    () -> "renamed " + to + ", but cannot sync its directory " + dir + ": " + e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (mapped != null) {
            mapped.close(); // first: it waits for reads from the mappings in flight
        }
        if (reader == null) {
            held.close();
            return;
        }
        synchronized (READERS) {
            if (--reader.users == 0) {
                READERS.remove(reader.key, reader);
                held.close();
            }
        }
    }

    /** The device's channels, for a test that closes one as an interrupt would. */
    LockedChannel held() {
        return held;
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException(path + " is closed");
        }
    }
}
