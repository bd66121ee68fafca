package org.htod.bench;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * A throughput run's iteration timed as a pass with what it put off: from a drained store to a
 * drained store. JMH's own score of a throughput iteration counts its operations over the
 * iteration's time and stops there, leaving out what the store still has to do for them (htod's
 * write buffer not yet installed, RocksDB's memtable and compactions, the kernel's dirty pages);
 * a store that puts off more would look faster than it is. So each iteration of a throughput
 * write benchmark {@link #begin begins} once the store is drained (an iteration setup), counts
 * every operation made ({@link #op}), and {@link #end ends} (an iteration teardown, once every
 * writer thread has stopped) by draining the store ({@code Drain}) inside the pass's time. The
 * pass's figures ({@link Figures}: operations, nanoseconds from its beginning to the drain's end,
 * and the drain's own) reach JMH's results as secondary scores ({@link DrainedCounters}), and
 * {@code operations / time} is the drained rate the reports use.
 *
 * <p>The pass counts every operation made between its beginning and its end, those JMH runs while
 * writer threads start and stop together (which its own score leaves out) included, and its time
 * runs from before the first of them to after the drain: everything the operations caused is in
 * it, and nothing else is. Same for every store.
 *
 * <p>A JMH state of {@code Scope.Benchmark}, one pass for all of a trial's threads: a benchmark
 * method takes it to count its operations, and the store's state takes it in its iteration setup
 * and teardown to begin and end the pass around its own drain. {@link DrainedCounters} reports it.
 */
@State(Scope.Benchmark)
public class DrainedPass {

    /**
     * One pass: operations made, nanoseconds from its beginning to the end of its drain, and the
     * drain's nanoseconds (part of {@code nanos}).
     */
    public record Figures(long ops, long nanos, long drainNanos) {
        static final Figures NONE = new Figures(0, 0, 0);

        /** Operations a second over the whole pass, the drain included. */
        public double opsPerSecond() {
            return nanos == 0 ? 0 : ops * 1e9 / nanos;
        }
    }

    private final LongSupplier clock;
    private final LongAdder ops = new LongAdder();
    /** When the pass in progress began; -1 when none is. */
    private long began = -1;
    private volatile Figures last = Figures.NONE;

    public DrainedPass() {
        this(System::nanoTime);
    }

    /** A pass timed by {@code clock}, in nanoseconds (a test's counting clock). */
    DrainedPass(LongSupplier clock) {
        this.clock = clock;
    }

    /** The store is drained: the pass begins now. */
    public void begin() {
        ops.reset();
        began = clock.getAsLong();
    }

    /** One operation made; from any thread. */
    public void op() {
        ops.increment();
    }

    /**
     * Ends the pass once no operation is in progress: runs {@code drain}, which makes everything
     * the pass's operations caused done, inside the pass's time; returns the pass's figures, which
     * {@link #last()} gives from now on.
     */
    public Figures end(Runnable drain) {
        if (began < 0) {
            throw new IllegalStateException("no pass begun");
        }
        long drainFrom = clock.getAsLong();
        drain.run();
        long to = clock.getAsLong();
        Figures f = new Figures(ops.sum(), to - began, to - drainFrom);
        began = -1;
        last = f;
        return f;
    }

    /** The figures of the last pass ended (zeros before the first). */
    public Figures last() {
        return last;
    }
}
