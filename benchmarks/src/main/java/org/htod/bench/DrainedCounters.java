package org.htod.bench;

import org.openjdk.jmh.infra.ThreadParams;

/**
 * The figures of a throughput iteration's {@link DrainedPass} as JMH secondary scores, summed over
 * the iterations: {@code drainedOps}, the operations of the passes; {@code drainedMs}, their
 * milliseconds, each from the store drained to the store drained, its drain included; {@code
 * drainMs}, of which the drains. The drained rate is {@code drainedOps / drainedMs} (× 1,000 for
 * operations a second); the JSON keeps each iteration's figures ({@code rawData}), from which the
 * reports take its error. Each benchmark that drains its iterations has a subclass, a JMH state of
 * {@code Scope.Thread} annotated {@code @AuxCounters(AuxCounters.Type.EVENTS)}, whose trial setup
 * calls {@link #bind} and which overrides the three counters (JMH reads a state's own methods, not
 * inherited ones): the pass is the benchmark's, one for all threads, so only thread 0 reports it
 * (JMH adds the threads' figures up).
 */
public abstract class DrainedCounters {

    private DrainedPass pass;
    private boolean reports;

    /** Reports {@code pass} from thread 0 of the trial. */
    protected final void bind(ThreadParams thread, DrainedPass pass) {
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
