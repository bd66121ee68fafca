package org.htod.core;

/** The heap or the device has no room for the request; nothing was written for it. */
public final class StoreFullException extends HtodException {
    private static final long serialVersionUID = 1L;

    public StoreFullException(String message) {
        super(message);
    }

    public StoreFullException(String message, Throwable cause) {
        super(message, cause);
    }
}
