package org.htod.mob;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.htod.core.container.Superblock;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;

/**
 * A store's device for the write layer's power-loss tests: a {@link CrashDevice} over the bytes,
 * seen through a wrapper that tells what the store was doing when the power was cut and counts
 * the log's group commits.
 *
 * <ul>
 *   <li>The phase of the cut, from the stack of the thread whose call met it: {@code recovery}
 *       (while the test opens the store), {@code close} (while it closes it), {@code doubling},
 *       {@code checkpoint}, {@code install} (the flusher's install of a batch, or one that {@code
 *       checkpoint()} runs), {@code group commit} (a writer leading the log's group commit), or
 *       {@code other}. Whether the cut fell on a write to the first or last 4 KiB of the log
 *       region, where the log wraps.
 *   <li>Rounds of the log: a thread's writes to the log region and the sync that follows them
 *       (a group commit's leader), or one durable write to the log region. Round {@code n} is the n-th to begin writing; {@link
 *       #roundsCompleted()} is the last whose sync returned. A writer reads {@link #roundsStarted()}
 *       when its call returns: the round after that one began writing after the call returned,
 *       and the one after it took its records after that, so once round {@code started + 2} has
 *       completed the write is on the platter.
 * </ul>
 */
final class PowerCutTracer extends ForwardingDevice {
    private final CrashDevice crash;
    private final long logFrom;
    private final long logSize;
    private final AtomicReference<String> phase = new AtomicReference<>();
    private final AtomicLong roundsStarted = new AtomicLong();
    private final ThreadLocal<long[]> round = ThreadLocal.withInitial(() -> new long[1]);
    private volatile boolean cutAtLapEdge;
    private long roundsCompleted;
    private long lastLogOffset = -1;
    private long laps;
    volatile boolean opening;
    volatile boolean closing;

    /** A tracer over a new crash simulator over {@code bytes}, whose log region has {@code logSize} bytes. */
    PowerCutTracer(MemoryDevice bytes, long logSize) {
        this(new CrashDevice(bytes), logSize);
    }

    private PowerCutTracer(CrashDevice crash, long logSize) {
        super(crash);
        this.crash = crash;
        this.logFrom = Superblock.LOG_OFFSET;
        this.logSize = logSize;
    }

    CrashDevice crash() {
        return crash;
    }

    /** The phase the power cut fell in, or null if it has not happened. */
    String phase() {
        return phase.get();
    }

    boolean cutAtLapEdge() {
        return cutAtLapEdge;
    }

    long roundsStarted() {
        return roundsStarted.get();
    }

    synchronized long roundsCompleted() {
        return roundsCompleted;
    }

    /** Times a write to the log region went back to its start. */
    synchronized long laps() {
        return laps;
    }

    @Override
    public void write(long pos, ByteBuffer src) {
        int len = src.remaining();
        beginRound(pos);
        try {
            super.write(pos, src);
        } catch (SimulatedCrashException e) {
            takeRound();
            cut(atLapEdge(pos, len));
            throw e;
        } catch (RuntimeException e) {
            takeRound();
            throw e;
        }
    }

    @Override
    public void sync() {
        long mine = takeRound();
        try {
            super.sync();
        } catch (SimulatedCrashException e) {
            cut(false);
            throw e;
        }
        completed(mine);
    }

    /**
     * A round by itself when it goes to the log (a group commit written through), made durable
     * alone as the crash simulator's durable write is: a layer that counted on it to make other
     * writes durable loses them here.
     */
    @Override
    public void writeDurable(long pos, ByteBuffer src) {
        int len = src.remaining();
        beginRound(pos);
        long mine = takeRound();
        try {
            crash.writeDurable(pos, src);
        } catch (SimulatedCrashException e) {
            cut(atLapEdge(pos, len));
            throw e;
        }
        completed(mine);
    }

    private boolean inLog(long pos) {
        return pos >= logFrom && pos < logFrom + logSize;
    }

    /** Whether a write of {@code len} bytes at {@code pos} touches the first or last 4 KiB of the log region. */
    private boolean atLapEdge(long pos, int len) {
        long off = pos - logFrom;
        return inLog(pos) && (off < 4096 || off + len > logSize - 4096);
    }

    /** A write to the log region begins this thread's round, unless one is open. */
    private void beginRound(long pos) {
        if (inLog(pos)) {
            noteLogWrite(pos - logFrom);
            long[] r = round.get();
            if (r[0] == 0) {
                r[0] = roundsStarted.incrementAndGet();
            }
        }
    }

    /** This thread's open round (0 if none), now closed: its sync is about to run, or its write failed. */
    private long takeRound() {
        long[] r = round.get();
        long mine = r[0];
        r[0] = 0;
        return mine;
    }

    private void completed(long mine) {
        if (mine > 0) {
            synchronized (this) {
                roundsCompleted = Math.max(roundsCompleted, mine);
            }
        }
    }

    private synchronized void noteLogWrite(long off) {
        if (lastLogOffset >= 0 && off + logSize / 2 < lastLogOffset) {
            laps++;
        }
        lastLogOffset = off;
    }

    /** The first call that met the cut names the phase; later ones meet a device already off. */
    private void cut(boolean lapEdge) {
        if (!crash.powerCut()) {
            return;
        }
        if (phase.compareAndSet(null, classify(Thread.currentThread().getStackTrace()))) {
            cutAtLapEdge = lapEdge;
        }
    }

    private String classify(StackTraceElement[] stack) {
        if (opening) {
            return "recovery";
        }
        if (closing) {
            return "close";
        }
        for (StackTraceElement e : stack) {
            String c = e.getClassName();
            String m = e.getMethodName();
            if (c.endsWith("Doubler$Logged") || m.equals("doublingStep") || m.equals("doublings")) {
                return "doubling";
            }
            if (c.equals(WriteLayer.class.getName()) || c.equals(Installs.class.getName())) {
                switch (m) {
                    case "checkpoint":
                        return "checkpoint";
                    case "installOnce":
                        return "install";
                    case "write":
                    case "batch":
                        return "group commit";
                    default:
                        break;
                }
            }
        }
        return "other";
    }
}
