package org.htod.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * A drained pass counts every operation and puts its drain inside its time. Its clock here is a
 * counter the test advances, so that what is checked is which intervals the pass adds up, not how
 * long anything took.
 */
class DrainedPassTest {

    @Test
    void theDrainIsInsideThePassesTime() {
        AtomicLong clock = new AtomicLong(1_000);
        DrainedPass pass = new DrainedPass(clock::get);
        pass.begin();
        for (int i = 0; i < 3; i++) {
            pass.op();
            clock.addAndGet(10);
        }
        int[] drains = {0};
        DrainedPass.Figures f = pass.end(() -> {
            drains[0]++;
            clock.addAndGet(500);
        });
        assertEquals(1, drains[0]);
        assertEquals(new DrainedPass.Figures(3, 30 + 500, 500), f);
        assertEquals(f, pass.last());
        assertEquals(3 / 530e-9, f.opsPerSecond(), 1e-3);
    }

    @Test
    void eachPassCountsItsOwnOperationsOnly() {
        AtomicLong clock = new AtomicLong();
        DrainedPass pass = new DrainedPass(clock::get);
        pass.begin();
        pass.op();
        pass.op();
        clock.addAndGet(7);
        pass.end(() -> clock.addAndGet(1));
        // the setup between two iterations is outside both passes
        clock.addAndGet(1_000);
        pass.begin();
        pass.op();
        clock.addAndGet(5);
        assertEquals(new DrainedPass.Figures(1, 5 + 2, 2), pass.end(() -> clock.addAndGet(2)));
    }

    @Test
    void aPassEndsOnlyOnceBegun() {
        DrainedPass pass = new DrainedPass(() -> 0);
        assertThrows(IllegalStateException.class, () -> pass.end(() -> {}));
        pass.begin();
        pass.end(() -> {});
        assertThrows(IllegalStateException.class, () -> pass.end(() -> {}));
    }

    @Test
    void onlyThreadZeroReportsTheSharedPass() {
        AtomicLong clock = new AtomicLong();
        DrainedPass pass = new DrainedPass(clock::get);
        pass.begin();
        pass.op();
        clock.addAndGet(2_000_000);
        pass.end(() -> clock.addAndGet(1_000_000));
        DrainedCounters zero = new DrainedCounters();
        DrainedCounters one = new DrainedCounters();
        zero.bind(thread(0), pass);
        one.bind(thread(1), pass);
        assertEquals(1, zero.drainedOps());
        assertEquals(3.0, zero.drainedMs(), 1e-9);
        assertEquals(1.0, zero.drainMs(), 1e-9);
        assertEquals(0, one.drainedOps());
        assertEquals(0.0, one.drainedMs());
    }

    private static ThreadParams thread(int index) {
        return new ThreadParams(index, 2, 0, 1, 0, 1, index, 2, index, 2);
    }
}
