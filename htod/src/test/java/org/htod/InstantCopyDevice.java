package org.htod;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.htod.core.device.FileDevice;
import org.htod.core.device.ForwardingDevice;

/**
 * A store's file whose writes and syncs a test holds while it copies the file, so that the copy
 * is the file at one instant, as a process killed at that instant leaves it. A plain copy of an
 * open store's file reads it front to back while the flusher may install and check point, and
 * mixes instants no crash can: a superblock naming a checkpoint whose block was since reused, a
 * log region already overwritten past the place it says replay starts.
 */
final class InstantCopyDevice extends ForwardingDevice {
    private final ReentrantReadWriteLock held = new ReentrantReadWriteLock();
    private final Path file;

    private InstantCopyDevice(Path file) {
        super(FileDevice.open(file));
        this.file = file;
    }

    /** The device of a store on {@code file} (opened, or created if missing), whose {@link #copyTo} makes instant copies. */
    static InstantCopyDevice on(Path file) {
        return new InstantCopyDevice(file);
    }

    /** Copies the file to {@code target}, every write and sync of the store held meanwhile. */
    void copyTo(Path target) {
        held.writeLock().lock();
        try {
            Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            held.writeLock().unlock();
        }
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        held.readLock().lock();
        try {
            super.write(pos, src);
        } finally {
            held.readLock().unlock();
        }
    }

    @Override
    public void writeDurable(long pos, ByteBuffer src) {
        held.readLock().lock();
        try {
            inner.writeDurable(pos, src);
        } finally {
            held.readLock().unlock();
        }
    }

    @Override
    public void sync() {
        held.readLock().lock();
        try {
            super.sync();
        } finally {
            held.readLock().unlock();
        }
    }
}
