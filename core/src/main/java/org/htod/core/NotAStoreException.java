package org.htod.core;

/** The file or device does not start with an htod superblock (wrong magic in both copies). */
public final class NotAStoreException extends HtodException {
    private static final long serialVersionUID = 1L;

    public NotAStoreException(String message) {
        super(message);
    }
}
