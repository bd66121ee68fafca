package org.htod.bench;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The figures of a throughput iteration's {@link DrainedPass} as JMH secondary scores, summed over
 * the iterations: {@code drainedOps}, the operations of the passes; {@code drainedMs}, their
 * milliseconds, each from the store drained to the store drained, its drain included; {@code
 * drainMs}, of which the drains. The drained rate is {@code drainedOps / drainedMs} (× 1,000 for
 * operations a second); the JSON keeps each iteration's figures ({@code rawData}), from which the
 * reports take its error. A benchmark that drains its iterations takes this state beside its
 * {@code DrainedPass}. The pass is one for all threads, so only thread 0 reports it (JMH adds the
 * threads' figures up).
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class DrainedCounters {

    private DrainedPass pass;
    private boolean reports;

    /** Reports {@code pass} from thread 0 of the trial. */
    @Setup(Level.Trial)
    public void bind(ThreadParams thread, DrainedPass pass) {
        this.pass = pass;
        this.reports = thread.getThreadIndex() == 0;
    }

    private DrainedPass.Figures figures() {
        return reports && pass != null ? pass.last() : DrainedPass.Figures.NONE;
    }

    /** Operations of the iteration's pass. */
    public long drainedOps() {
        return figures().ops();
    }

    /** Milliseconds of the iteration's pass, from the store drained to the store drained again. */
    public double drainedMs() {
        return figures().nanos() / 1e6;
    }

    /** Milliseconds of the drain at the pass's end (part of {@link #drainedMs()}). */
    public double drainMs() {
        return figures().drainNanos() / 1e6;
    }
}
