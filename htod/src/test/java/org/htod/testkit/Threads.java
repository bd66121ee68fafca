package org.htod.testkit;

/** What a test can tell of another thread from its stack. */
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
}
