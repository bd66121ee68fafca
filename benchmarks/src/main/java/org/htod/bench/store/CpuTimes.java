package org.htod.bench.store;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;

/**
 * Processor time, as the JVM counts it: the whole process's (every thread, those the JVM did not
 * start included: RocksDB's compactions, the collector, the compilers), a thread's by its id, and
 * that of the live threads whose names begin alike (htod's flusher). Where a trial's time goes,
 * beside its puts: a store bound by its processors and one bound by its disk both make fewer puts,
 * and only this tells them apart. Each figure is -1 where the JVM cannot count it.
 */
public final class CpuTimes {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private CpuTimes() {}

    /** Nanoseconds of processor time the whole process has used so far. */
    public static long process() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
    }

    /**
     * The processor time of the thread with id {@code id} and, of it, its time in user mode, in
     * nanoseconds; -1 where it has ended or the JVM does not count it.
     */
    public static long[] thread(long id) {
        if (!THREADS.isThreadCpuTimeSupported()) {
            return new long[] {-1, -1};
        }
        return new long[] {THREADS.getThreadCpuTime(id), THREADS.getThreadUserTime(id)};
    }

    /**
     * Processor time of the live threads whose names start with {@code prefix}, since each started,
     * and of it their time in user mode, in nanoseconds.
     */
    public static long[] threadsNamed(String prefix) {
        if (!THREADS.isThreadCpuTimeSupported()) {
            return new long[] {-1, -1};
        }
        long cpu = 0;
        long user = 0;
        for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith(prefix)) {
                // -1: the thread ended meanwhile
                cpu += Math.max(0, THREADS.getThreadCpuTime(t.getThreadId()));
                user += Math.max(0, THREADS.getThreadUserTime(t.getThreadId()));
            }
        }
        return new long[] {cpu, user};
    }
}
