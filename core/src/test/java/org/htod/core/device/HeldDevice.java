package org.htod.core.device;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A device that holds the first read (or write) made while {@code when} says so, once armed,
 * until the test releases it: a test's way to stop one thread of the store at a chosen I/O and
 * see what the others do meanwhile. {@link #held} is counted down when the I/O is held, {@link
 * #release} lets it go on; {@link #arm()} holds the next one again, with fresh latches.
 */
public final class HeldDevice extends ForwardingDevice {
    public volatile boolean armed;
    public volatile CountDownLatch held = new CountDownLatch(1);
    public volatile CountDownLatch release = new CountDownLatch(1);
    private final boolean writes;
    private final BooleanSupplier when;

    /** Holds a write if {@code writes}, else a read, made while {@code when} is true (asked on the I/O's thread). */
    public HeldDevice(BlockDevice inner, boolean writes, BooleanSupplier when) {
        super(inner);
        this.writes = writes;
        this.when = when;
    }

    /** Holds the next I/O of the kind, {@code when} permitting, with new {@link #held} and {@link #release} latches. */
    public void arm() {
        held = new CountDownLatch(1);
        release = new CountDownLatch(1);
        armed = true;
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
        CountDownLatch r = release;
        held.countDown();
        try {
            if (!r.await(5, TimeUnit.MINUTES)) {
                throw new AssertionError("the test never released the held I/O");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
