package org.htod.mob;

import org.htod.core.CorruptStoreException;
import org.htod.core.DeviceFailedException;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreLockedException;
import org.htod.core.log.Log;

/**
 * The flusher thread of a write layer, and when it works: it installs the write buffer into the
 * tables when the buffer or the log fills, or after a second idle, and drains the buffer whole on
 * close; it keeps the doublings going and takes the checkpoints that let the log's space be
 * reused (the work itself is {@link Installs}'s); at durability ASYNC it syncs the log every
 * interval. When the device fails it retries, and writers that need room get the error instead
 * of waiting; when it meets damage or a closed device it stops for good.
 *
 * <p>Locks: none of its own but {@link #signal}'s monitor, on which it sleeps between rounds and
 * writers wake it. The failure fields are written by the flusher thread and read by any.
 */
final class Flusher {
    private final WriteLayer layer;
    private final Mob mob;
    private final Log log;
    private final Installs installs;
    private final WriteLayer.Options options;
    private final WriteLayer.Stats stats;
    private final Object signal = new Object();
    private Thread thread;
    /** The last error of a round, while the flusher retries; null when it works. */
    private volatile HtodException failure;
    /** Why the flusher stopped for good, or null while it runs. */
    private volatile HtodException stopped;
    /** Why the flusher gave a close up (it kept failing): close() says so, and may be called again. */
    private volatile HtodException closeFailure;
    private int closingFailures;
    private long lastAsyncSync = System.nanoTime();
    /** Whether the flusher is at work (not waiting for it), and since when it was last counted; its thread's only. */
    private boolean working;
    private long workCounted;

    Flusher(WriteLayer layer, Mob mob, Log log, Installs installs, WriteLayer.Options options, WriteLayer.Stats stats) {
        this.layer = layer;
        this.mob = mob;
        this.log = log;
        this.installs = installs;
        this.options = options;
        this.stats = stats;
        this.thread = newThread();
    }

    private Thread newThread() {
        Thread t = new Thread(this::loop, "htod-flusher " + layer.deviceName());
        t.setDaemon(true);
        return t;
    }

    void start() {
        thread.start();
    }

    /** After a close the flusher gave up: a new thread, so that the store works on and close may be tried again. */
    void restart() {
        closeFailure = null;
        closingFailures = 0;
        thread = newThread();
        thread.start();
    }

    /** Wakes the flusher now (a close). */
    void wake() {
        synchronized (signal) {
            signal.notifyAll();
        }
    }

    /** Ends the thread for good, whatever it was doing (a test then installs and steps by hand). */
    void interruptAndJoin() throws InterruptedException {
        thread.interrupt();
        thread.join();
    }

    /** Waits up to {@code millis} (at least 1) for the thread to end (after a close woke it); whether it ended. */
    boolean join(long millis) throws InterruptedException {
        thread.join(Math.max(1, millis));
        return !thread.isAlive();
    }

    /**
     * Where the thread is now, for a close that gave up waiting for it: its innermost frames in
     * this library (the device operation it is in), the JDK's below them left out.
     */
    String where() {
        StringBuilder b = new StringBuilder();
        int shown = 0;
        for (StackTraceElement f : thread.getStackTrace()) {
            if (f.getClassName().startsWith("org.htod.") && shown++ < 4) {
                b.append(shown == 1 ? "" : " < ").append(f);
            }
        }
        return b.length() == 0 ? "not running" : b.toString();
    }

    /** After a change: wakes the flusher if the buffer or the log is past its high-water mark. */
    void nudge() {
        if (overHighWater()) {
            wake();
        }
    }

    /** The last error of a round, while the flusher retries; null when it works. */
    HtodException failure() {
        return failure;
    }

    /** Why the flusher stopped for good, or null while it runs. */
    HtodException stopped() {
        return stopped;
    }

    /** Why the flusher gave the last close up, or null. */
    HtodException closeFailure() {
        return closeFailure;
    }

    /**
     * The high-water marks: the buffer over half full, the log over a third used, the replaced
     * placed values holding much of the heap, or placed values logged since the last checkpoint
     * past half the buffer (see {@code Installs.placedDue}). A round runs at once.
     */
    private boolean overHighWater() {
        return mob.bytes() > mob.capacity() / 2 || log.used() > log.regionSize() / 3
                || installs.replaced.worthASync(mob.capacity()) || installs.placedDue();
    }

    private boolean workDue() {
        return layer.closing() || overHighWater();
    }

    private void loop() {
        long idleSince = System.nanoTime();
        while (true) {
            try {
                synchronized (signal) {
                    long wait = Math.max(1, Math.min(options.syncIntervalMillis(), 50));
                    if (!workDue()) {
                        signal.wait(wait);
                    }
                }
                working = true;
                workCounted = System.nanoTime();
                if (options.durability() == WriteLayer.Durability.ASYNC
                        && System.nanoTime() - lastAsyncSync > options.syncIntervalMillis() * 1_000_000L) {
                    lastAsyncSync = System.nanoTime();
                    if (!log.failed()) {
                        log.sync();
                    }
                }
                if (installs.replaced.worthASync(mob.capacity())) {
                    installs.replaced.syncAndGiveBack();
                }
                boolean idle = System.nanoTime() - idleSince > 1_000_000_000L;
                if (layer.closing() || idle || overHighWater()) {
                    // A pass that installs "everything" installs what was buffered when it began:
                    // chasing a steady writer instead would never end, and would install a few
                    // keys per batch, each batch a sync and a log record, with nothing absorbed.
                    // Only a close drains the buffer whole (no writer adds to it then).
                    long passEnd = layer.closing() ? Long.MAX_VALUE : log.end();
                    boolean all = layer.closing() || idle;
                    boolean progress = true;
                    while (progress) {
                        // oldest first, a batch at a time, until below the low-water marks; a
                        // doubling step between batches; a checkpoint whenever the log fills
                        boolean wanted = (all && mob.minFirstLsn(Long.MAX_VALUE) < passEnd)
                                || mob.bytes() > mob.capacity() / 4 || uninstalledLog() > log.regionSize() / 4
                                || installs.placedDue(); // installed, so that a checkpoint can move past them
                        installs.keepUpDoublings(); // the tables sized for the keys the install adds
                        progress = wanted && installs.installOnce();
                        progress |= installs.doublings();
                        installs.checkpointIfLogFills();
                        countWork(); // a batch at a time: a pass lasts as long as the writers outrun it
                    }
                    if (layer.closing() && mob.isEmpty() && installs.checkpoint(true)) {
                        return; // else a writer in the middle of a change when the close began added one: again
                    }
                    if (idle && installs.logMovedSinceCheckpoint()) {
                        installs.checkpoint(false);
                    } else {
                        installs.checkpointIfLogFills();
                    }
                    idleSince = System.nanoTime();
                }
                if (failure != null) {
                    failure = null;
                    log.unstall(); // room can be made again: writers that need it wait for it
                    mob.stall(null);
                }
            } catch (InterruptedException e) {
                return;
            } catch (StoreClosedException e) {
                stop(e); // the device is gone (closed under the store, as when a process dies): nothing to retry
                return;
            } catch (StoreLockedException e) {
                stop(e); // another store took the file while an interrupt had dropped its lock: never retried
                return;
            } catch (CorruptStoreException e) {
                // Damage in the tables or the heap: installing again would meet it again. Reads go
                // on (what they meet is reported to them); writes are refused from now on.
                stop(e);
                return;
            } catch (HtodException e) {
                DeviceFailedException gone = deviceFailed(e);
                if (gone != null) {
                    // A sync failed and the device refuses every sync since: what was written
                    // before it may be lost, and no retry can tell. Reads go on; reopening
                    // recovers from what the disk holds.
                    stop(gone);
                    return;
                }
                failure = e;
                stats.installFailures++;
                // Writers that need room now get this error instead of waiting: a full disk makes
                // writes fail with a typed error while reads go on, and they succeed again once
                // an install does.
                log.stall(e);
                mob.stall(e);
                if (layer.isClosed()) {
                    stop(e);
                    return;
                }
                if (layer.closing() && ++closingFailures >= 3) {
                    closeFailure = e; // a close does not wait for a device that keeps failing; it may be tried again
                    return;
                }
                workEnded();
                sleepQuietly(20); // a device error: try again shortly; writes keep going to the log and buffer
            } catch (RuntimeException | Error e) {
                stop(new HtodException("the flusher of " + layer.deviceName() + " stopped: " + e, e));
                return;
            } finally {
                workEnded();
                synchronized (signal) {
                    signal.notifyAll();
                }
            }
        }
    }

    /**
     * Adds the time at work since it was last counted to {@link WriteLayer.Stats#flusherBusyNanos}:
     * the flusher's passes, its installs' syncs and waits for their records included, and its
     * waits for what others hold (the stripes of writers in a group commit, the install lock, room
     * in the log); not its waits for work or its pauses before a retry.
     */
    private void countWork() {
        if (working) {
            long now = System.nanoTime();
            stats.flusherBusyNanos += now - workCounted;
            workCounted = now;
        }
    }

    /** {@link #countWork}, then the flusher is no longer at work. */
    private void workEnded() {
        countWork();
        working = false;
    }

    /**
     * Bytes of the log from the oldest record whose change the tables do not hold yet to the end:
     * what installs, and only installs, can release. The rest of the used log a checkpoint
     * releases. The flusher's installs are driven by this, not by the used log: between one
     * checkpoint and the next the used log stays above its low-water mark however much is
     * installed, and a flusher driven by it chased a lone writer with an install (a heap sync
     * and a log record) every few dozen puts, where one batch of thousands suffices.
     */
    private long uninstalledLog() {
        long end = log.end();
        return end - mob.minFirstLsn(end);
    }

    /**
     * The flusher stops for good: writers are told why instead of waiting for room. The records
     * appended since the log's last sync (at ASYNC and NONE) are made durable first where the
     * log's device still works (damage in the tables, say): the log refuses every call from then
     * on, and they would never be written, though the close says the next open recovers them.
     */
    private void stop(HtodException why) {
        failure = why;
        stopped = why;
        try {
            if (!log.failed()) {
                log.sync();
            }
        } catch (RuntimeException e) {
            // the log's device fails too: those records are lost, as a crash would lose them
        }
        log.refuse(why);
        mob.close();
    }

    /**
     * A writer's heal of the log met {@code why}: the device refuses every sync since one failed.
     * The flusher stops as it does when it meets that itself; its thread ends at its next round,
     * whose heal meets it again.
     */
    void stopOn(DeviceFailedException why) {
        stop(why);
    }

    /** The {@link DeviceFailedException} {@code e} is or was caused by (a log's error wraps its device's), or null. */
    static DeviceFailedException deviceFailed(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof DeviceFailedException d) {
                return d;
            }
        }
        return null;
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
