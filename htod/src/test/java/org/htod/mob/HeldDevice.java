package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;

/**
 * A device that holds the first read (or write) made while {@code when} says so, once armed,
 * until the test releases it: a test's way to stop one thread of the store at a chosen I/O and
 * see what the others do meanwhile.
 */
final class HeldDevice extends ForwardingDevice {
    volatile boolean armed;
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final boolean writes;
    private final BooleanSupplier when;

    /** Holds a write if {@code writes}, else a read, made while {@code when} is true (asked on the I/O's thread). */
    HeldDevice(BlockDevice inner, boolean writes, BooleanSupplier when) {
        super(inner);
        this.writes = writes;
        this.when = when;
    }

    @Override
    public void read(long pos, ByteBuffer dst) {
        if (!writes) {
            holdIfDue();
        }
        super.read(pos, dst);
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        if (writes) {
            holdIfDue();
        }
        super.write(pos, src);
    }

    private void holdIfDue() {
        if (!armed || !when.getAsBoolean()) {
            return;
        }
        armed = false;
        held.countDown();
        try {
            if (!release.await(5, TimeUnit.MINUTES)) {
                throw new AssertionError("the test never released the held I/O");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
