package org.htod.core;

/** Another open store, in this process or another, holds the exclusive lock on the file. */
public final class StoreLockedException extends HtodException {
    private static final long serialVersionUID = 1L;

    public StoreLockedException(String message) {
        super(message);
    }
}
