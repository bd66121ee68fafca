package org.htod.table;

import java.nio.ByteBuffer;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.SimulatedCrashException;

/**
 * Power loss at the n-th write <em>or sync</em>, over a {@code CrashDevice}: a write at the cut
 * never reaches it, and a sync at the cut does not happen, so the writes it was to make durable
 * stay pending and the crash keeps any subset of them, as when power fails while the disk flushes
 * its cache. Every later write and sync fails too.
 */
final class PowerCut extends ForwardingDevice {
    private long countdown = -1;
    private boolean cut;
    private boolean cutAtSync;

    PowerCut(BlockDevice inner) {
        super(inner);
    }

    /** The {@code n}-th write or sync from now (1 = the next) loses power. */
    synchronized void arm(long n) {
        countdown = n;
    }

    synchronized boolean cutAtSync() {
        return cutAtSync;
    }

    private synchronized void event(boolean sync, String what) {
        if (cut) {
            throw new SimulatedCrashException("power already lost");
        }
        if (countdown > 0 && --countdown == 0) {
            cut = true;
            cutAtSync = sync;
            throw new SimulatedCrashException("power lost at " + what);
        }
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        event(false, "a write of " + src.remaining() + " bytes at offset " + pos);
        super.write(pos, src);
    }

    @Override
    public void sync() {
        event(true, "a sync");
        super.sync();
    }
}
