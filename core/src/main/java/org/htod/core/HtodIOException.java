package org.htod.core;

import java.io.IOException;
import java.io.UncheckedIOException;

/** An I/O error from the file or device under the store, with the store and offset it hit. */
public final class HtodIOException extends HtodException {
    private static final long serialVersionUID = 1L;

    public HtodIOException(String message, IOException cause) {
        super(message + ": " + cause, cause);
    }

    public HtodIOException(UncheckedIOException e) {
        this(e.getMessage() == null ? "I/O error" : e.getMessage(), e.getCause());
    }
}
