package org.htod.testkit;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock a test moves by hand, from any thread: what expiry is judged by in tests of times to live. */
public final class ManualClock extends Clock {
    /** Epoch milliseconds now. */
    public final AtomicLong millis = new AtomicLong(1_000_000);

    /** Moves the clock by {@code by} milliseconds (back, if negative). */
    public void advance(long by) {
        millis.addAndGet(by);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }
}
