package org.htod;

/**
 * A key or value is larger than an entry can hold ({@link Htod#MAX_KEY_BYTES}, {@link
 * Htod#MAX_VALUE_BYTES}, measured after encoding). Thrown before anything is written. An {@link
 * IllegalArgumentException}, as the {@code Map} contract has a put reject a value it cannot
 * store.
 */
public final class EntryTooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    EntryTooLargeException(String message) {
        super(message);
    }
}
