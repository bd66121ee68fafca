package org.htod.core;

/** An operation was attempted on a store or device that has been closed. */
public final class StoreClosedException extends HtodException {
    private static final long serialVersionUID = 1L;

    public StoreClosedException(String message) {
        super(message);
    }
}
