package org.htod.testkit;

import java.util.concurrent.TimeUnit;

/** What a test can tell of another thread from its stack, and waiting for a test's threads. */
public final class Threads {
    private Threads() {}

    /** Whether {@code t} is, now, inside {@code method} of {@code type} (waiting there or not). */
    public static boolean inside(Thread t, Class<?> type, String method) {
        for (StackTraceElement f : t.getStackTrace()) {
            if (f.getClassName().equals(type.getName()) && f.getMethodName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Waits for each of {@code threads} to end, up to two minutes each; one still running then
     * fails the test with its own stack, which shows where it hangs.
     */
    public static void joinOrFail(Thread... threads) {
        for (Thread t : threads) {
            try {
                t.join(TimeUnit.MINUTES.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (t.isAlive()) {
                AssertionError stuck = new AssertionError(t.getName() + " still runs after 2 minutes");
                stuck.setStackTrace(t.getStackTrace());
                throw stuck;
            }
        }
    }
}
