package org.htod.core;

/**
 * The seed of a random-operation test: {@code -Dhtod.test.seed=N} when given (to replay a failure),
 * else a new one each run. A failure names the test, the seed and the property that replays it.
 */
public final class Seeds {
    /** The system property that fixes the seed. */
    public static final String PROPERTY = "htod.test.seed";

    /** A test's body, run with its seed. */
    @FunctionalInterface
    public interface Body {
        void run(long seed) throws Exception;
    }

    private Seeds() {}

    /** Runs {@code body} with a seed; what it throws comes back as an error naming {@code test} and the seed. */
    public static void run(String test, Body body) {
        long seed = Long.getLong(PROPERTY, System.nanoTime());
        try {
            body.run(seed);
        } catch (Exception | AssertionError e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new AssertionError(test + " seed " + seed + " (replay with -D" + PROPERTY + "=" + seed + "): "
                    + e.getMessage(), e);
        }
    }
}
