package org.htod.core.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.locks.ReentrantLock;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;

/**
 * A raw disk, or a file, opened with {@code O_DIRECT}: no page cache, so the store's own cache
 * is the only one and benchmarks measure the disk. Every transfer uses a buffer aligned to the
 * device's block size at a block-aligned offset; a request that is not aligned is served by
 * reading the blocks it covers, changing them in memory and writing them back, under a lock, so
 * that two such requests in one block cannot lose each other's bytes.
 *
 * <p>For a block device ({@code /dev/...}) the block size and the capacity come from
 * {@code /sys/class/block/NAME}; for a regular file the block size is its file system's, and the
 * capacity is given. {@link #size()} is the capacity for a device and the file length, a multiple
 * of the block size, for a file.
 */
public final class RawDevice implements BlockDevice {
    private static final int MAX_TRANSFER = 1 << 20;
    /** Transfer buffers kept for reuse; a thread that finds none allocates one. */
    private static final int POOLED = 16;

    private final Path path;
    /** The file's channel, opened again, its lock taken again, if an interrupt closes it (see {@code LockedChannel}). */
    private final LockedChannel held;
    private final boolean blockDevice;
    private final long capacity;
    private final int blockSize;
    private final ReentrantLock writeLock = new ReentrantLock();
    /**
     * Aligned transfer buffers of {@link #MAX_TRANSFER} bytes, taken for one transfer and given
     * back. A direct buffer is freed only when the collector finds it unreachable, and one
     * allocated per transfer, as before, piled up faster than that: a store loading a million
     * objects in a 1 GiB heap held about as much again in dead direct buffers, and the kernel
     * killed the JVM in its 2 GiB memory cgroup.
     */
    private final ArrayBlockingQueue<ByteBuffer> pool = new ArrayBlockingQueue<>(POOLED);
    private volatile boolean closed;

    private RawDevice(Path path, LockedChannel held, boolean blockDevice, long capacity, int blockSize) {
        this.path = path;
        this.held = held;
        this.blockDevice = blockDevice;
        this.capacity = capacity;
        this.blockSize = blockSize;
    }

    /** Opens a block device, such as {@code /dev/sdb} or {@code /dev/nvme0n1p2}; its size is read from sysfs. */
    public static RawDevice open(Path device) {
        String name;
        try {
            name = device.toRealPath().getFileName().toString();
        } catch (IOException e) {
            throw new HtodIOException("cannot resolve " + device, e);
        }
        Path sys = Path.of("/sys/class/block", name);
        if (!Files.isDirectory(sys)) {
            throw new HtodIOException(device + " is not a block device known to /sys/class/block; for a regular file use"
                    + " RawDevice.open(path, capacity)", new IOException("no " + sys));
        }
        long sectors = Long.parseLong(readSys(sys.resolve("size")));
        Path queue = Files.isDirectory(sys.resolve("queue")) ? sys.resolve("queue") : sys.resolve("../queue");
        int block = Integer.parseInt(readSys(queue.resolve("logical_block_size")));
        return open(device, true, sectors * 512, block, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** Opens or creates a regular file for direct I/O, holding at most {@code capacity} bytes. */
    public static RawDevice open(Path file, long capacity) {
        int block = 4096;
        try {
            Path dir = file.toAbsolutePath().getParent();
            block = (int) Math.max(512, Files.getFileStore(Files.exists(file) ? file : dir).getBlockSize());
        } catch (IOException | UnsupportedOperationException e) {
            // Keep 4096, which every file system that supports O_DIRECT accepts.
        }
        return open(file, false, capacity, block, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
    }

    private static String readSys(Path p) {
        try {
            return Files.readString(p).trim();
        } catch (IOException e) {
            throw new HtodIOException("cannot read " + p, e);
        }
    }

    /**
     * {@code com.sun.nio.file.ExtendedOpenOption.DIRECT}, looked up at run time: the class is in
     * the JDK's {@code jdk.unsupported} module, which javac reports as internal API when it is
     * named in code (an error under -Werror since JDK 25), though it is the one way to O_DIRECT.
     */
    static OpenOption direct() {
        try {
            Class<?> c = Class.forName("com.sun.nio.file.ExtendedOpenOption");
            for (Object o : c.getEnumConstants()) {
                if (((Enum<?>) o).name().equals("DIRECT")) {
                    return (OpenOption) o;
                }
            }
            throw new UnsupportedOperationException("this JDK's ExtendedOpenOption has no DIRECT");
        } catch (ClassNotFoundException e) {
            throw new UnsupportedOperationException("this JDK has no com.sun.nio.file.ExtendedOpenOption, so no O_DIRECT", e);
        }
    }

    private static RawDevice open(Path path, boolean blockDevice, long capacity, int block, OpenOption... opts) {
        if (Integer.bitCount(block) != 1) {
            throw new IllegalArgumentException(path + ": block size " + block + " is not a power of two");
        }
        Set<OpenOption> options = new HashSet<>(java.util.List.of(opts));
        options.add(direct());
        LockedChannel held = LockedChannel.open(path, options, !blockDevice,
                e -> new HtodIOException("O_DIRECT is not supported by the file system holding " + path
                        + ", or the file cannot be opened", e instanceof IOException io ? io : new IOException(e)));
        RawDevice d = new RawDevice(path, held, blockDevice, capacity, block);
        d.probe();
        return d;
    }

    /** Some file systems accept O_DIRECT at open and refuse it at the first transfer (EINVAL). */
    private void probe() {
        ByteBuffer b = aligned(blockSize);
        try {
            held.call(ch -> ch.read(b, b.position()));
        } catch (IOException e) {
            close();
            throw new HtodIOException("O_DIRECT is not supported by the file system holding " + path, e);
        }
    }


    /** A direct buffer of exactly {@code n} bytes starting at a block-aligned address. */
    private ByteBuffer aligned(int n) {
        return ByteBuffer.allocateDirect(n + blockSize).alignedSlice(blockSize).limit(n).slice();
    }

    /** A transfer buffer from the pool, or a new one, positioned at 0 with {@code n} (at most {@link #MAX_TRANSFER}) bytes. */
    private ByteBuffer borrow(int n) {
        ByteBuffer b = pool.poll();
        if (b == null) {
            b = aligned(MAX_TRANSFER);
        }
        return b.clear().limit(n);
    }

    /** Gives {@code b} back for the next transfer; dropped when the pool is full. */
    private void giveBack(ByteBuffer b) {
        pool.offer(b);
    }

    private long down(long pos) {
        return pos & -blockSize;
    }

    private long up(long pos) {
        return (pos + blockSize - 1) & -blockSize;
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        ensureOpen();
        int len = dst.remaining();
        long size = size();
        if (pos < 0 || pos > size - len) {
            throw new HtodIOException("read of " + len + " bytes at offset " + pos + " past the end of " + path + " (size "
                    + size + ")", new java.io.EOFException());
        }
        try {
            while (dst.hasRemaining()) {
                long from = down(pos);
                int n = (int) Math.min(up(pos + dst.remaining()) - from, MAX_TRANSFER);
                ByteBuffer b = readBlocks(from, n);
                try {
                    int skip = (int) (pos - from);
                    int take = Math.min(dst.remaining(), n - skip);
                    dst.put(b.position(skip).limit(skip + take));
                    pos += take;
                } finally {
                    giveBack(b);
                }
            }
        } catch (IOException e) {
            throw held.error("read of " + len + " bytes at offset " + pos, e);
        }
    }

    /**
     * Reads {@code n} bytes (a multiple of the block size) at aligned {@code from} into a pooled
     * buffer, which the caller gives back; past the end of a file, zeros.
     */
    private ByteBuffer readBlocks(long from, int n) throws IOException {
        ByteBuffer b = borrow(n);
        try {
            while (b.hasRemaining()) {
                if (held.call(ch -> ch.read(b, from + b.position())) < 0) {
                    break;
                }
            }
            while (b.hasRemaining()) {
                b.put((byte) 0);
            }
        } catch (IOException | RuntimeException e) {
            giveBack(b);
            throw e;
        }
        return b.flip();
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        ensureOpen();
        int len = src.remaining();
        if (pos < 0 || pos > capacity - len) {
            throw new StoreFullException("write of " + len + " bytes at offset " + pos + " exceeds the capacity " + capacity
                    + " of " + path);
        }
        writeLock.lock();
        try {
            while (src.hasRemaining()) {
                long from = down(pos);
                int n = (int) Math.min(up(pos + src.remaining()) - from, MAX_TRANSFER);
                int skip = (int) (pos - from);
                int take = Math.min(src.remaining(), n - skip);
                boolean whole = skip == 0 && take == n;
                ByteBuffer b = whole ? borrow(n) : readBlocks(from, n);
                try {
                    ByteBuffer part = src.duplicate();
                    part.limit(part.position() + take);
                    b.position(skip).put(part);
                    src.position(src.position() + take);
                    b.position(0).limit(n);
                    while (b.hasRemaining()) {
                        held.call(ch -> ch.write(b, from + b.position()));
                    }
                } finally {
                    giveBack(b);
                }
                pos += take;
            }
        } catch (IOException e) {
            throw held.error("write of " + len + " bytes at offset " + pos, e);
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public void sync() {
        ensureOpen();
        held.sync();
    }


    @Override
    public long size() {
        ensureOpen();
        if (blockDevice) {
            return capacity;
        }
        try {
            return held.call(FileChannel::size);
        } catch (IOException e) {
            throw held.error("size", e);
        }
    }

    @Override
    public long capacity() {
        return capacity;
    }

    /** The device's logical block size: the unit of every transfer, and of torn writes. */
    @Override
    public int sectorSize() {
        return blockSize;
    }

    @Override
    public String name() {
        return path.toString();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        held.close();
    }

    /** The device's channel, for a test that closes it as an interrupt would. */
    LockedChannel held() {
        return held;
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException(path + " is closed");
        }
    }
}
