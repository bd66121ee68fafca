package org.htod.fragment;

/**
 * A fragment's source holds something that starts like an include directive but is not one, or
 * names a path that is not a fragment path. Thrown before anything is written. An {@link
 * IllegalArgumentException}: the source given is at fault, and giving it again fails again.
 */
public final class MalformedIncludeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final int offset;

    MalformedIncludeException(String message, int offset) {
        super("malformed include at character " + offset + ": " + message);
        this.offset = offset;
    }

    /** Character offset in the source where the directive went wrong. */
    public int offset() {
        return offset;
    }
}
