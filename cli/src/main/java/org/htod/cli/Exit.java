package org.htod.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodIOException;
import org.htod.core.IncompatibleFormatException;
import org.htod.core.NotAStoreException;
import org.htod.core.StoreFullException;
import org.htod.core.StoreLockedException;

/** The exit codes of the tool, one per kind of failure; listed in {@code htod --help} and the README. */
enum Exit {
    OK(0), PROBLEMS(1), USAGE(2), NOT_A_STORE(3), LOCKED(4), FORMAT(5), CORRUPT(6), FULL(7), IO(8), EXISTS(9), OTHER(10);

    final int code;

    Exit(int code) {
        this.code = code;
    }

    /** The exit code for a failure, by its kind (the first cause that names one). */
    static Exit of(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BadInputException) {
                return OTHER; // before its cause: a line that is not JSON is bad input, not an I/O error
            }
            if (t instanceof NotAStoreException || t instanceof NoSuchFileException) {
                return NOT_A_STORE;
            }
            if (t instanceof StoreLockedException) {
                return LOCKED;
            }
            if (t instanceof IncompatibleFormatException) {
                return FORMAT;
            }
            if (t instanceof CorruptStoreException) {
                return CORRUPT;
            }
            if (t instanceof StoreFullException) {
                return FULL;
            }
            if (t instanceof TargetExistsException || t instanceof FileAlreadyExistsException) {
                return EXISTS;
            }
            if (t instanceof HtodIOException || t instanceof IOException || t instanceof UncheckedIOException) {
                return IO;
            }
        }
        return OTHER;
    }

    /** One line: the exception's message (which names the file), its first line only. */
    static String message(Throwable e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /**
     * A line of an import's input that cannot be read or stored: exit 10, whatever the cause (the
     * JSON parser's exceptions are IOExceptions, which would otherwise make it an I/O error).
     */
    static final class BadInputException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadInputException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The target of a copy, a salvage or an export exists, and the tool does not overwrite it. */
    static final class TargetExistsException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TargetExistsException(String message) {
            super(message);
        }
    }
}
