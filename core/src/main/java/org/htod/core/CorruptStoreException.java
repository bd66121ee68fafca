package org.htod.core;

/**
 * A structure on disk failed its checksum or its invariants. The message names the store, the
 * byte offset, what was expected and what was found.
 */
public final class CorruptStoreException extends HtodException {
    private static final long serialVersionUID = 1L;
    private final long offset;

    public CorruptStoreException(String message, long offset) {
        super(message);
        this.offset = offset;
    }

    /** Byte offset in the container of the structure that failed, or -1 when there is none. */
    public long offset() {
        return offset;
    }
}
