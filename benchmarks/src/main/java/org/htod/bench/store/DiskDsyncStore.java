package org.htod.bench.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Not a store: the disk's own rate of durable writes, measured by the durable-put benchmark in
 * the same run as the stores, as {@code dd bs=4k oflag=dsync conv=notrunc} measures it. Each put
 * is one 4 KiB write through an {@code O_DSYNC} descriptor, overwriting the next block of a 64 MiB
 * file written and synced when it opens (so no write allocates a block or changes the file's
 * size), whatever the key and value. It is the ceiling of a store whose durable put is one write:
 * a lone htod writer's put is one write of its log frames through an {@code O_DSYNC} descriptor.
 * With several threads, each put takes the next block, so their writes may be in flight together.
 * It is a {@link DurableProbe}: nothing can be read back.
 */
final class DiskDsyncStore extends DurableProbe {
    static final String NAME = "disk-dsync";
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 16384; // 64 MiB

    private final Path file;
    private final FileChannel channel;
    private final AtomicLong next = new AtomicLong();
    private final ThreadLocal<ByteBuffer> buffers = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BLOCK));

    DiskDsyncStore(Path dir) {
        super(NAME, "the disk's writes");
        file = dir.resolve("dsync.blocks");
        try (FileChannel fill = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            for (long pos = 0; pos < (long) BLOCK * BLOCKS; pos += zeros.capacity()) {
                fill.write(zeros.clear(), pos);
            }
            fill.force(true);
            channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.DSYNC);
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot open " + file, e);
        }
    }

    @Override
    public void put(byte[] key, byte[] value) {
        ByteBuffer b = buffers.get().clear();
        b.put(value, 0, Math.min(value.length, BLOCK)).clear();
        long pos = (next.getAndIncrement() % BLOCKS) * BLOCK;
        try {
            while (b.hasRemaining()) {
                channel.write(b, pos + b.position());
            }
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot write at " + pos + " of " + file, e);
        }
    }

    @Override
    public long diskBytes() {
        return (long) BLOCK * BLOCKS;
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot close " + file, e);
        }
    }
}
