package org.htod;

import org.htod.core.HtodException;

/**
 * A key, value or map name is larger than an entry can hold ({@link Htod#MAX_KEY_BYTES}, {@link
 * Htod#MAX_VALUE_BYTES}, measured after encoding). Thrown before anything is written or
 * allocated.
 */
public final class EntryTooLargeException extends HtodException {
    private static final long serialVersionUID = 1L;

    public EntryTooLargeException(String message) {
        super(message);
    }
}
