package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.htod.core.DeviceFailedException;
import org.htod.core.HtodIOException;
import org.junit.jupiter.api.Test;

/**
 * A file device whose sync failed fails every later sync, until the file is opened again: a failed
 * sync may have lost writes made before it (Linux drops the pages whose write-back failed and
 * reports the error once to each descriptor), and a later sync that passed would claim them
 * durable. The failure is injected into the channel's {@code force}, as the kernel's error reaches it.
 */
class FailedSyncTest {
    /** A channel that passes everything to {@code inner}, and fails {@code force} while {@link #failing} is above 0. */
    private static final class FailingForce extends FileChannel {
        final FileChannel inner;
        final AtomicInteger failing;
        /** A thread whose force waits, once in it, for {@link #release}, then fails; null for none. */
        volatile Thread held;
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        FailingForce(FileChannel inner, AtomicInteger failing) {
            this.inner = inner;
            this.failing = failing;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            if (Thread.currentThread() == held) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("Input/output error (injected, after a wait)");
            }
            if (failing.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new IOException("Input/output error (injected)");
            }
            inner.force(metaData);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return inner.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return inner.read(dsts, offset, length);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return inner.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return inner.write(srcs, offset, length);
        }

        @Override
        public long position() throws IOException {
            return inner.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            inner.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return inner.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            inner.truncate(size);
            return this;
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return inner.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            return inner.transferFrom(src, position, count);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return inner.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            return inner.write(src, position);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return inner.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return inner.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return inner.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            inner.close();
        }
    }

    @Test
    void aFailedSyncFailsEveryLaterSyncUntilTheFileIsOpenedAgain() throws IOException {
        Path file = Files.createTempFile("htod-failed-sync", ".store");
        try {
            AtomicInteger failing = new AtomicInteger();
            ByteBuffer data = ByteBuffer.wrap(new byte[] {1, 2, 3, 4});
            try (FileDevice dev = FileDevice.open(file, Long.MAX_VALUE, 512, false,
                    (p, options) -> new FailingForce(FileChannel.open(p, options), failing))) {
                dev.write(0, data.duplicate());
                dev.sync();
                failing.set(1); // the next force fails, and only that one
                HtodIOException first = assertThrows(HtodIOException.class, dev::sync);
                assertTrue(first.getMessage().contains("sync on"), first.getMessage());
                assertEquals(0, failing.get(), "the force was made and failed");
                dev.write(512, data.duplicate());
                for (int i = 0; i < 3; i++) {
                    DeviceFailedException later = assertThrows(DeviceFailedException.class, dev::sync, "sync " + i + " after");
                    assertTrue(later.getMessage().contains("an earlier sync failed") && later.getCause() == first,
                            later.getMessage());
                }
                ByteBuffer back = ByteBuffer.allocate(4);
                dev.read(512, back);
                assertArrayEquals(data.array(), back.array(), "reads go on");
            }
            try (FileDevice again = FileDevice.open(file)) {
                again.sync(); // opened again: its syncs are its own
                ByteBuffer back = ByteBuffer.allocate(4);
                again.read(0, back);
                assertArrayEquals(data.array(), back.array());
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * A sync that comes while another's force is under way, and that force then fails, fails too:
     * of two forces under way together the kernel reports a lost write-back to one only, so the
     * device makes one sync at a time, and the second finds the first one's failure latched.
     */
    @Test
    void aSyncBehindOneThatFailsFailsToo() throws Exception {
        Path file = Files.createTempFile("htod-failed-sync", ".store");
        try {
            AtomicInteger failing = new AtomicInteger();
            FailingForce[] channel = new FailingForce[1];
            try (FileDevice dev = FileDevice.open(file, Long.MAX_VALUE, 512, false, (p, options) -> {
                FailingForce c = new FailingForce(FileChannel.open(p, options), failing);
                if (channel[0] == null) {
                    channel[0] = c; // the main channel, which syncs use
                }
                return c;
            })) {
                dev.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3, 4}));
                Throwable[] seen = new Throwable[2];
                Thread failingSync = new Thread(() -> seen[0] = syncCatching(dev), "failing");
                Thread behind = new Thread(() -> seen[1] = syncCatching(dev), "behind");
                channel[0].held = failingSync;
                failingSync.start();
                assertTrue(channel[0].entered.await(1, TimeUnit.MINUTES));
                behind.start();
                long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
                while (behind.isAlive() && behind.getState() != Thread.State.BLOCKED && System.nanoTime() < until) {
                    Thread.sleep(1); // waits for the first sync, or (unserialized) passes on its own
                }
                channel[0].release.countDown();
                failingSync.join(TimeUnit.MINUTES.toMillis(1));
                behind.join(TimeUnit.MINUTES.toMillis(1));
                assertTrue(seen[0] instanceof HtodIOException, "the sync that fails: " + seen[0]);
                assertTrue(seen[1] instanceof DeviceFailedException, "the sync behind it: " + seen[1]);
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static Throwable syncCatching(BlockDevice dev) {
        try {
            dev.sync();
            return null;
        } catch (Throwable e) {
            return e;
        }
    }
}
