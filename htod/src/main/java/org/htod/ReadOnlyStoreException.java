package org.htod;

import org.htod.core.HtodException;

/**
 * A change asked of a store opened {@linkplain Htod.Builder#readOnly read-only}: a write, a batch,
 * a map that does not exist, a compaction. Thrown before anything is changed.
 */
public final class ReadOnlyStoreException extends HtodException {
    private static final long serialVersionUID = 1L;

    ReadOnlyStoreException(String message) {
        super(message);
    }
}
