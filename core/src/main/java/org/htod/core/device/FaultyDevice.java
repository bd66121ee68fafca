package org.htod.core.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;

/**
 * Fails on purpose: the n-th write or sync after arming throws an I/O error or a disk-full error,
 * once or from then on. The failed write writes nothing. For tests that check that a failure is
 * reported clearly and loses nothing that was acknowledged.
 */
public final class FaultyDevice extends ForwardingDevice {
    /** What the failing call throws. */
    public enum Fault { IO_ERROR, DISK_FULL }

    private final AtomicInteger writesLeft = new AtomicInteger(-1);
    private final AtomicInteger syncsLeft = new AtomicInteger(-1);
    private volatile Fault fault = Fault.IO_ERROR;
    private volatile boolean sticky;
    private volatile boolean failing;

    public FaultyDevice(BlockDevice inner) {
        super(inner);
    }

    /** The {@code n}-th write from now (1 = the next) fails; with {@code sticky}, every later one too. */
    public void failWrite(int n, Fault f, boolean sticky) {
        this.fault = f;
        this.sticky = sticky;
        writesLeft.set(n);
    }

    /** The {@code n}-th sync from now fails; with {@code sticky}, every later one too. */
    public void failSync(int n, Fault f, boolean sticky) {
        this.fault = f;
        this.sticky = sticky;
        syncsLeft.set(n);
    }

    /** Stops failing. */
    public void heal() {
        failing = false;
        writesLeft.set(-1);
        syncsLeft.set(-1);
    }

    private void maybeFail(AtomicInteger left, String what) {
        if (failing || left.get() > 0 && left.decrementAndGet() == 0) {
            failing = sticky;
            if (fault == Fault.DISK_FULL) {
                throw new StoreFullException("injected disk full at " + what + " on " + inner.name());
            }
            throw new HtodIOException(what + " on " + inner.name(), new IOException("injected I/O error"));
        }
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        maybeFail(writesLeft, "write of " + src.remaining() + " bytes at offset " + pos);
        inner.write(pos, src);
    }

    @Override
    public void sync() {
        maybeFail(syncsLeft, "sync");
        inner.sync();
    }
}
