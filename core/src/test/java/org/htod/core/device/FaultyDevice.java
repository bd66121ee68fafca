package org.htod.core.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.htod.core.DeviceFailedException;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;

/**
 * Fails on purpose, for tests (shipped in the core test kit): the n-th write or sync after arming
 * throws an I/O error or a disk-full error, once or from then on. The failed write writes nothing,
 * unless armed with {@link #failWriteAfter} to write part of its bytes first, as a disk that
 * fails in the middle of a request may (whole sectors: see {@link #failWriteAfter}).
 * For tests that check that a failure is reported clearly and loses nothing that was acknowledged;
 * a sticky disk-full fault that {@link #heal()} lifts is a disk that fills up and gets room again.
 */
public final class FaultyDevice extends ForwardingDevice {
    /** What the failing call throws. */
    public enum Fault { IO_ERROR, DISK_FULL }

    /** When one kind of call (writes, or syncs) fails; the two are armed and fail independently. */
    private static final class Trigger {
        private int left = -1;
        private Fault fault = Fault.IO_ERROR;
        private boolean sticky;
        private boolean failing;

        synchronized void arm(int n, Fault f, boolean stick) {
            left = n;
            fault = f;
            sticky = stick;
            failing = false;
        }

        synchronized void heal() {
            left = -1;
            failing = false;
        }

        /** The fault to raise for this call, or null. */
        synchronized Fault next() {
            if (failing || (left > 0 && --left == 0)) {
                failing = sticky;
                return fault;
            }
            return null;
        }
    }

    private final Trigger writes = new Trigger();
    /** How many bytes of the failing write reach the device before it fails. */
    private volatile int landing;
    private final Trigger syncs = new Trigger();
    /** Whether the armed sync failure latches ({@link #failSyncLatching}). */
    private volatile boolean latching;
    /** The sync failure that latched: every later sync is refused. */
    private volatile HtodException latched;
    private final AtomicInteger raised = new AtomicInteger();

    public FaultyDevice(BlockDevice inner) {
        super(inner);
    }

    /** The {@code n}-th write from now (1 = the next) fails; with {@code sticky}, every later write too. */
    public void failWrite(int n, Fault f, boolean sticky) {
        landing = 0;
        writes.arm(n, f, sticky);
    }

    /**
     * The {@code n}-th write from now writes its first {@code bytes} bytes (all of a shorter one),
     * then fails with an I/O error.
     *
     * <p>A device lands whole sectors of a failed write ({@link BlockDevice}): {@code bytes} not a
     * multiple of the sector size leaves a sector part old, part new, which none does. A test that
     * loses power after such a failure, before the store overwrites what landed, lands whole
     * sectors: a log frame left mixed fails its CRC where the durable records end, and the open is
     * refused as damage (FailedWriteLandingTest).
     */
    public void failWriteAfter(int n, int bytes) {
        landing = bytes;
        writes.arm(n, Fault.IO_ERROR, false);
    }

    /** The {@code n}-th sync from now fails; with {@code sticky}, every later sync too. */
    public void failSync(int n, Fault f, boolean sticky) {
        latching = false;
        syncs.arm(n, f, sticky);
    }

    /**
     * The {@code n}-th sync from now fails with an I/O error, and every later one is refused with
     * {@link DeviceFailedException} until {@link #heal()}, as a file refuses them until it is
     * opened again ({@code LockedChannel}): the writes the failed sync was to make durable may be lost.
     */
    public void failSyncLatching(int n) {
        latching = true;
        syncs.arm(n, Fault.IO_ERROR, false);
    }

    /** Stops failing (a latched sync failure too, as a file opened again). */
    public void heal() {
        writes.heal();
        syncs.heal();
        latching = false;
        latched = null;
    }

    /** Faults thrown so far: zero after an operation means it never met the armed fault. */
    public int faultsRaised() {
        return raised.get();
    }

    private void maybeFail(Trigger t, String what) {
        maybeFail(t, what, null);
    }

    /** Fails if {@code t} says so, after {@code landing} is run, if given. */
    private void maybeFail(Trigger t, String what, Runnable landing) {
        Fault f = t.next();
        if (f != null) {
            raised.incrementAndGet();
            if (landing != null) {
                landing.run();
            }
        }
        if (f == Fault.DISK_FULL) {
            throw new StoreFullException("injected disk full at " + what + " on " + inner.name());
        }
        if (f == Fault.IO_ERROR) {
            throw new HtodIOException(what + " on " + inner.name(), new IOException("injected I/O error"));
        }
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        int part = Math.min(landing, src.remaining());
        maybeFail(writes, "write of " + src.remaining() + " bytes at offset " + pos,
                part == 0 ? null : () -> inner.write(pos, src.duplicate().limit(src.position() + part)));
        inner.write(pos, src);
    }

    @Override
    public void sync() {
        HtodException first = latched;
        if (first != null) {
            raised.incrementAndGet();
            throw new DeviceFailedException("sync on " + inner.name() + " refused: an earlier sync failed", first);
        }
        try {
            maybeFail(syncs, "sync");
        } catch (HtodIOException e) {
            if (latching) {
                latched = e;
            }
            throw e;
        }
        inner.sync();
    }
}
