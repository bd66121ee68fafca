package org.htod.core;

/** The store was written in a format version this library does not read. */
public final class IncompatibleFormatException extends HtodException {
    private static final long serialVersionUID = 1L;
    private final int found;
    private final int minSupported;
    private final int maxSupported;

    public IncompatibleFormatException(String store, int found, int minSupported, int maxSupported) {
        super(describe(store, found, minSupported, maxSupported));
        this.found = found;
        this.minSupported = minSupported;
        this.maxSupported = maxSupported;
    }

    private static String describe(String store, int found, int min, int max) {
        String which = found > max ? "too new" : "too old";
        return "format version " + found + " of " + store + " is " + which
                + ": this library reads versions " + min + " to " + max;
    }

    public int foundVersion() {
        return found;
    }

    /** True when the store was written by a newer library than this one. */
    public boolean isTooNew() {
        return found > maxSupported;
    }

    public int minSupported() {
        return minSupported;
    }

    public int maxSupported() {
        return maxSupported;
    }
}
