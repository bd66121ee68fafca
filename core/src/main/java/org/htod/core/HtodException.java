package org.htod.core;

/**
 * Base of every error htod reports. Unchecked, so that callers of the {@code ConcurrentMap} view
 * can use it without wrapping; each subclass names what was expected, what was found and where.
 */
public class HtodException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HtodException(String message) {
        super(message);
    }

    public HtodException(String message, Throwable cause) {
        super(message, cause);
    }
}
